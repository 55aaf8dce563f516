"""A plugin that registers a stage called ``l2``, which the built-in normalizers already provide."""

from filterkit.hookspecs import hookimpl
from filterkit.stage import Stage


class MyL2(Stage):
    """Does nothing; only its name matters."""

    name = "l2"

    def transform(self, chunk):
        return chunk


@hookimpl
def register_stages(register):
    register(MyL2)

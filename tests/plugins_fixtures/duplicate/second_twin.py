"""One of two plugins that both register a stage called ``twin``."""

from filterkit.hookspecs import hookimpl
from filterkit.stage import Stage


class Twin(Stage):
    """Does nothing; only its name matters."""

    name = "twin"

    def transform(self, chunk):
        return chunk


@hookimpl
def register_stages(register):
    register(Twin)

"""A plugin that registers a stage instance where the class is expected."""

from filterkit.hookspecs import hookimpl
from filterkit.stage import Stage


class Identity(Stage):
    """Return every chunk as it is."""

    name = "identity"

    def transform(self, chunk):
        return chunk


@hookimpl
def register_stages(register):
    register(Identity())

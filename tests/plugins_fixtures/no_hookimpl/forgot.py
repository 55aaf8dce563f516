"""A plugin whose hook implementation is not marked with ``@hookimpl``: it registers nothing."""

from filterkit.stage import Stage


class Forgotten(Stage):
    """Never registered."""

    name = "forgotten"

    def transform(self, chunk):
        return chunk


def register_stages(register):
    register(Forgotten)

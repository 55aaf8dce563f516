from filterkit.hookspecs import hookimpl
from filterkit.stage import Stage


class Silent(Stage):
    name = "silent"

    def transform(self, chunk):
        return chunk


@hookimpl
def register_stages(register):
    register(Silent)

"""A plugin implementing ``register_widgets``, a hook filterkit does not define."""

from filterkit.hookspecs import hookimpl


@hookimpl
def register_widgets(register):
    register(object())

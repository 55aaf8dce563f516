"""A plugin whose ``register_stages`` takes an argument the hookspec does not define."""

from filterkit.hookspecs import hookimpl


@hookimpl
def register_stages(register, colour):
    register(colour)

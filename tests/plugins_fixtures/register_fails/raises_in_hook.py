"""A plugin that imports fine but whose ``register_stages`` raises."""

from filterkit.hookspecs import hookimpl


@hookimpl
def register_stages(register):
    raise RuntimeError("cannot make my stages today")

"""A format that declares ``streams`` and ``ranges``, which --engine dask would cut and read with ARFF's reader:
refused when registered (issue 73)."""

from filterkit.plugin import Format, hookimpl


@hookimpl
def register_formats(register):
    register(Format("cut", "cut:Nothing", streams=True, ranges="lines"))

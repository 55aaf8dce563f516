"""A format that declares ``streams`` and a reading option, which a streamed input would be read without:
refused when registered (issue 73)."""

from filterkit.plugin import Format, Option, hookimpl


@hookimpl
def register_formats(register):
    register(
        Format(
            "optioned",
            "filterkit.formats.arff:ArffFormat",
            streams=True,
            options=(Option("strict", bool, False, "Read strictly."),),
        )
    )

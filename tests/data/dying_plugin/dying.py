"""A stage whose process dies while transforming (as a crash in compiled code or the kernel's
out-of-memory killer would end it): the fixture of a Dask worker dying mid-task."""

import os

from filterkit.hookspecs import hookimpl
from filterkit.stage import Stage


class Dying(Stage):
    """End the process, without a word, on the first chunk it transforms."""

    name = "dying"
    summary = "End the process during transform (test fixture)."

    def transform(self, chunk):
        os._exit(3)


@hookimpl
def register_stages(register):
    register(Dying)

"""``dieonce``: a stage that kills the process running it the first time it works (a test fixture, never for
real use), to hold the Dask engine to its promise that a worker killed mid-run costs nothing but time."""

import os
import signal

from filterkit.hookspecs import hookimpl
from filterkit.stage import Option, Stage


class DieOnce(Stage):
    """Pass rows through unchanged; the first fit (or transform) of a chunk, anywhere, kills its process (SIGKILL)
    after creating the file ``--marker``, which keeps every later one alive."""

    name = "dieonce"
    summary = "Kill the process the first time it fits or transforms (test fixture)."
    learns = True
    options = (
        Option("during", str, "transform", "The step that kills.", choices=("fit", "transform")),
        Option("marker", str, None, "The file whose creation marks that the process was killed once."),
    )

    def _die_the_first_time(self, step: str) -> None:
        if self.params["during"] != step:
            return
        try:
            with open(self.params["marker"], "x"):
                pass
        except FileExistsError:
            return
        os.kill(os.getpid(), signal.SIGKILL)

    def new_statistics(self):
        return 0

    def accumulate(self, statistics, chunk):
        self._die_the_first_time("fit")
        return statistics + chunk.n_rows

    def merge(self, first, second):
        return first + second

    def finalize(self, statistics):
        self.rows = statistics

    def transform(self, chunk):
        self._die_the_first_time("transform")
        return chunk


@hookimpl
def register_stages(register):
    register(DieOnce)

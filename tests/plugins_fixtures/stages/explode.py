"""A throwaway stage that raises during fit or transform, as a buggy plugin would."""

from filterkit.hookspecs import hookimpl
from filterkit.stage import Option, Stage


class Explode(Stage):
    """Raise ZeroDivisionError in the step named by --during."""

    name = "explode"
    summary = "Raise an error during fit or transform (test fixture)."
    learns = True
    options = (Option("during", str, "transform", "The step that raises.", choices=("fit", "transform")),)

    def new_statistics(self):
        return 0

    def accumulate(self, statistics, chunk):
        if self.params["during"] == "fit":
            raise ZeroDivisionError("boom while fitting")
        return statistics + chunk.n_rows

    def merge(self, first, second):
        return first + second

    def finalize(self, statistics):
        self.rows = statistics

    def transform(self, chunk):
        raise ZeroDivisionError("boom while transforming")


@hookimpl
def register_stages(register):
    register(Explode)

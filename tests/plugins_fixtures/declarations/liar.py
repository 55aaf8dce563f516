"""A throwaway stage whose declarations lie: each attribute the chain reads of a stage can raise or be of the
wrong type, as a buggy plugin's would."""

from filterkit.hookspecs import hookimpl
from filterkit.stage import Accepts, Option, Stage

#: A value of the wrong type for each attribute of a stage the chain reads.
WRONG_STAGE_VALUES = {
    "learns": "yes",
    "accepts": "text",
    "widening_hint": 5,
    "changes_class": "no",
    "filters_rows": 1,
    "keeps_fit_pass": "yes",
    "state_arrays": ["scale"],
}


def lying(attribute: str, default):
    """A stage's ``attribute``: ``default``, unless --attribute names it: then it raises (--fault raises) or
    is of the wrong type (--fault wrong-type)."""

    def read(stage):
        if stage.params["attribute"] != attribute:
            return default
        if stage.params["fault"] == "raises":
            raise RuntimeError(f"{attribute} is broken")
        return WRONG_STAGE_VALUES[attribute]

    return property(read)


class Liar(Stage):
    """Count the rows and pass them through, with the attribute named by --attribute broken as --fault says."""

    name = "liar"
    options = (
        Option("attribute", str, "none", "The attribute that is broken.", choices=("none", *WRONG_STAGE_VALUES)),
        Option("fault", str, "raises", "How it is broken.", choices=("raises", "wrong-type")),
    )
    learns = lying("learns", True)
    accepts = lying("accepts", Accepts())
    widening_hint = lying("widening_hint", "")
    changes_class = lying("changes_class", False)
    filters_rows = lying("filters_rows", False)
    keeps_fit_pass = lying("keeps_fit_pass", False)
    state_arrays = lying("state_arrays", {})

    def new_statistics(self):
        return 0

    def accumulate(self, statistics, chunk):
        return statistics + chunk.n_rows

    def merge(self, first, second):
        return first + second

    def finalize(self, statistics):
        self.rows = statistics

    def transform(self, chunk):
        return chunk


@hookimpl
def register_stages(register):
    register(Liar)

"""A working plugin next to a broken one: the stage ``negate`` flips the features' signs."""

from filterkit.hookspecs import hookimpl
from filterkit.schema import Chunk
from filterkit.stage import Stage


class Negate(Stage):
    """Multiply every numeric feature by -1."""

    name = "negate"
    summary = "Flip the sign of every numeric feature (test fixture)."

    def transform(self, chunk):
        values = chunk.dense_values().copy()
        values[:, self.features] *= -1
        return Chunk(values, chunk.text, chunk.weights)


@hookimpl
def register_stages(register):
    register(Negate)

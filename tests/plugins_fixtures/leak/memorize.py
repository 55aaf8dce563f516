"""``memorize``: a stage that would score perfectly only by seeing the rows it is tested on.

Fitting records each training row's features and class; the transform adds nothing
new but replaces the first feature by +1 for a row it memorized as positive, −1 for
one memorized as negative and 0 for a row it never saw.  A chain fitted on the test
rows too would hand the classifier the answer.
"""

from filterkit.hookspecs import hookimpl
from filterkit.stage import Stage


class Memorize(Stage):
    name = "memorize"
    summary = "Replace the first feature by the memorized class of the row (a leakage probe)."
    learns = True

    def new_statistics(self):
        return {}

    def _keys(self, chunk):
        values = chunk.dense_values()[:, self.features]
        return [row.tobytes() for row in values]

    def accumulate(self, memory, chunk):
        classes = chunk.dense_values()[:, self.context.class_index]
        positive = self.input_schema.attributes[self.context.class_index].labels.index(self.context.positive)
        return {**memory, **{key: float(c == positive) * 2 - 1 for key, c in zip(self._keys(chunk), classes)}}

    def merge(self, first, second):
        return {**first, **second}

    def finalize(self, memory):
        self.memory = memory

    def transform(self, chunk):
        values = chunk.dense_values().copy()
        values[:, self.features[0]] = [self.memory.get(key, 0.0) for key in self._keys(chunk)]
        return type(chunk)(values, chunk.text, chunk.weights)


@hookimpl
def register_stages(register):
    register(Memorize)

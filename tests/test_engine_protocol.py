"""``running.run`` asks an engine only what the ``Engine`` protocol declares (issue 48, item 3): where the
output goes is an ``OutputTarget`` the engine checks and writes, one file or one per partition, so ``run``
has no branch for the Dask engine and calls no method of it alone."""

from __future__ import annotations

import dataclasses

import pytest

from chain_helpers import REAL, installed_plugins_once
from filterkit.errors import FilterkitError
from filterkit.outputs import checked_output
from filterkit.runner import Chain
from filterkit.running import LocalEngine, OutputTarget, open_source, run

IRIS = str(REAL / "iris.arff")


@dataclasses.dataclass
class ProtocolOnlyEngine:
    """An engine with the protocol's four methods and no other, recording what ``run`` asks of it."""

    calls: list = dataclasses.field(default_factory=list)

    def opened(self, chain, input_path):
        return open_source(input_path, 1000, needs_passes=True)

    def check_target(self, source, target):
        self.calls.append(("check_target", target))

    def fit(self, chain, source):
        self.calls.append(("fit",))
        chain.fit(source)

    def write(self, chain, source, target, form, comments, before_publish):
        self.calls.append(("write", target, comments[-1].split(":")[0]))
        before_publish()


def minmax_chain() -> Chain:
    return Chain([installed_plugins_once().make_stage("minmax", {})])


@pytest.mark.parametrize("to_folder", [False, True])
def test_run_asks_an_engine_only_what_the_protocol_declares(to_folder, tmp_path):
    engine, saved = ProtocolOnlyEngine(), []
    output = None if to_folder else checked_output(str(tmp_path / "out.arff"))
    folder = str(tmp_path / "parts") if to_folder else None
    run(minmax_chain(), IRIS, engine, output, save_model=saved.append, output_dir=folder)
    target = OutputTarget(output, folder)
    assert engine.calls == [("check_target", target), ("fit",), ("write", target, "filterkit chain")]
    assert len(saved) == 1 and saved[0].schema.relation == "iris"  # the model is saved from the source


def test_the_local_engine_refuses_a_folder_target_before_any_pass(tmp_path):
    chain = minmax_chain()
    with pytest.raises(FilterkitError, match="--output-dir"):
        run(chain, IRIS, LocalEngine(1000), output_dir=str(tmp_path / "parts"))
    assert chain.output_schema is None and not (tmp_path / "parts").exists()

"""The definition picture tells publish from read, names the Channel, and draws no long loops."""

from __future__ import annotations

import re

from dexviz.viz.definition_view import definition_graph
from tests.analysis.definition.helpers import CONTRACT_EDIT


def _edges(dot: str, kind: str) -> list[str]:
    return [line for line in dot.splitlines() if f'class="{kind}"' in line and "->" in line]


def test_publish_and_read_look_different_and_say_so_in_the_legend():
    dot = definition_graph(CONTRACT_EDIT).to_dot()
    publish, read = _edges(dot, "resource-publish"), _edges(dot, "resource-read")
    assert publish and read
    style = {line.split('style="')[1].split('"')[0] for line in publish}
    assert style == {"dotted"} and all('style="dashed"' in line for line in read)
    assert "publish (Step → Channel)" in dot and "read (Channel → Step)" in dot
    assert "┈┈┈▶" in dot and "╌╌╌▶" in dot


def test_publishes_go_to_a_channel_stub_beside_the_publisher_not_back_up():
    dot = definition_graph(CONTRACT_EDIT).to_dot()
    publish = _edges(dot, "resource-publish")
    assert all("constraint" not in line for line in publish)
    targets = {re.search(r'-> "([^"]+)"', line).group(1) for line in publish}  # type: ignore[union-attr]
    assert targets and all(t.startswith("stub:channel:") for t in targets)
    name = '"stub:channel:contractEditToken@step:SaveContractEdit"'
    stub = next(line for line in dot.splitlines() if line.lstrip().startswith(name))
    assert 'label="contractEditToken"' in stub
    assert "published to / written (beside the Step)" in dot


def test_a_publish_to_a_channel_nobody_waits_on_is_labelled_with_the_channel(tmp_path):
    source = tmp_path / "pub.py"
    source.write_text(
        "from dexviz import Channel, Context, Flow, Step, StepList, dead_end\n"
        "OUT = Channel('out', int)\n"
        "class Emit(Step[int]):\n"
        "    def execute(self, context: Context, n: int):\n"
        "        OUT.publish(context, n)\n"
        "        return dead_end()\n"
        "class Pub(Flow[int]):\n"
        "    def get_steps(self):\n"
        "        return StepList.start_step(Emit())\n")
    (edge,) = _edges(definition_graph(source).to_dot(), "resource-publish")
    assert '-> "channel:out"' in edge and 'label="out"' in edge

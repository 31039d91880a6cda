"""Hand-written correct programs for every TEACh task family succeed in generated scenes.

The gold program of each family runs through the compiler and the executor (no LLM; systematic
search finds objects hidden in closed receptacles) in 12 seeded scenes per family, 216 episodes in
all, and the TEACh checker must find the task done in every one.
"""

from __future__ import annotations

import pytest

from helper_agent.evals.benchmark.episodes import prepared_scenes, run_program
from helper_agent.evals.benchmark.families import FAMILIES

EPISODES_PER_FAMILY = 12


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_gold_program_succeeds(family: str) -> None:
    scenes = prepared_scenes(family, EPISODES_PER_FAMILY)
    assert len(scenes) == EPISODES_PER_FAMILY
    hidden_start = 0
    for scene in scenes:
        episode = run_program(scene.state, scene.instance.program, scene.instance.task_name, scene.instance.params)
        assert not episode.initial.success, f"{family} seed {scene.seed} is done before starting"
        assert episode.success, (
            f"{family} in {scene.room_type} seed {scene.seed}: {episode.execution.status} {episode.execution.error}"
        )
        assert episode.execution.steps < 1000 and episode.execution.failures == 0
        hidden_start += any("searching" in note for t in episode.execution.trace for note in t.notes)
    assert len(FAMILIES) * EPISODES_PER_FAMILY >= 200

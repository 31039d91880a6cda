"""How an evaluation run builds its method from the registry (`graphs/registry.py`).

The run's `EvalSpec` becomes the method's `BuildRequest`: the run's switches, its memory folder
(`EvalSpec.memory_folder`), seed, feedback rounds and ablation, the dataset, and a reader of the
dataset's train split, since the graphs may not read TEACh files themselves. Only the train split
is read here; valid splits reach an agent only as the episodes it is run on.
"""

from __future__ import annotations

import functools

from langchain_core.language_models import BaseChatModel

from helper_agent.evals.engine.spec import EvalSpec
from helper_agent.graphs.registry import BuildRequest, TrainingEpisode
from helper_agent.teach.formats import TeachDataset
from helper_agent.teach.instances import instruction_text


def training_episodes(data: str, split: str = "train") -> list[TrainingEpisode]:
    """Every TfD instance of `split`: its dialogue, reference future actions and task family.
    Only the train split is meant here: the caller passes nothing else."""
    episodes = []
    for instance in TeachDataset(data).tfd_instances(split):
        extra = (instance.model_extra or {}).get("helper_agent") or {}
        episodes.append(TrainingEpisode(
            id=f"{split}:{instance.instance_id}", instruction=instruction_text(instance.dialog()),
            actions=[(a.action_name, a.oid) for a in getattr(instance, "driver_actions_future", [])],
            family=str(extra.get("family", "")),
        ))
    return episodes


def build_request(spec: EvalSpec, chat_model: BaseChatModel) -> BuildRequest:
    """The request a run's method is built from."""
    return BuildRequest(
        chat_model=chat_model, options=dict(spec.agent_options), memory_dir=spec.memory_folder(), seed=spec.seed,
        feedback=spec.feedback, ablate=spec.ablate, data=spec.data,
        training=functools.partial(training_episodes, spec.data) if spec.data else None,
    )

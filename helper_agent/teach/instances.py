"""TEACh instance loading, shared by the evaluation harness and the CLI: an instance file becomes a
game's initial state, the dialogue text the agent reads, the task it is checked on and, for EDH, the
driver's action history to replay.

One place for this, because two copies drift: the history replay skips the actions that do not
change the world (Text, Speech, Beep, Navigation), and the agent reads the cleaned dialogue.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helper_agent.envs.base import Environment
from helper_agent.teach.actions import DRIVER_ID
from helper_agent.teach.errors import TeachFormatError
from helper_agent.teach.evaluation import edh_check_task, tfd_check_task
from helper_agent.teach.formats import (
    EdhInstance,
    Game,
    TfdInstance,
    read_edh_instance,
    read_game,
    read_tfd_instance,
)
from helper_agent.teach.tasks import Task

# Driver actions that do not act on the world: replaying them would only count steps.
NON_WORLD_ACTIONS = frozenset({"Text", "Speech", "Beep", "Navigation"})


def instruction_text(turns: Iterable[tuple[str, str]]) -> str:
    """Flatten turns into the one string the planner sees: "<Driver> hi ... <Commander> make coffee"."""
    return " ".join(f"<{speaker}> {utterance}" for speaker, utterance in turns)


def instance_mode(path: str | Path) -> str:
    """"edh" or "tfd", from the file name TEACh gives instances (`*.edhN.json`, `*.tfd.json`)."""
    name = Path(path).name
    if ".edh" in name:
        return "edh"
    if ".tfd" in name:
        return "tfd"
    raise TeachFormatError(str(path), None, "not a TEACh instance file name (expected *.edhN.json or *.tfd.json)")


def instance_id_of(path: str | Path) -> str:
    """The id an instance file declares by its name (`<game>.tfd.json` -> `<game>.tfd`)."""
    name = Path(path).name
    return name[: -len(".json")] if name.endswith(".json") else name


def game_path(instance_path: str | Path, game_id: str) -> Path:
    """Where TEACh's layout keeps an instance's game: `<root>/games/<split>/<game>.game.json`."""
    split_dir = Path(instance_path).parent
    return split_dir.parent.parent / "games" / split_dir.name / f"{game_id}.game.json"


def initial_state(game: Game) -> dict[str, Any]:
    """A game's initial state as an environment scene: objects, driver pose, room type, grid.

    Our own games carry the floor grid; for real TEACh games the environment rebuilds it from the
    objects.
    """
    episode = game.episode
    if episode.initial_state is None:
        raise TeachFormatError(f"game {game.game_id}", "tasks[0].episodes[0].initial_state", "missing")
    driver = next((a for a in episode.initial_state.agents if a.get("agent_id") == DRIVER_ID or a.get("name") == "Driver"), None)
    extra = (game.model_extra or {}).get("helper_agent") or {}
    state: dict[str, Any] = {"objects": episode.initial_state.objects_with_custom_metadata(), "sceneName": episode.world}
    if driver and "position" in driver:
        state["agent"] = driver
    if "grid" in extra:
        state["grid"] = extra["grid"]
    state["roomType"] = episode.world_type
    return state


@dataclass
class LoadedInstance:
    """Everything an episode needs from one TfD or EDH instance file."""

    path: Path
    mode: str  # "tfd" or "edh"
    instance: TfdInstance | EdhInstance
    game: Game
    task: Task  # the task the episode is checked on
    dialogue: str  # the cleaned dialogue, flattened for the planner

    @property
    def instance_id(self) -> str:
        return self.instance.instance_id or instance_id_of(self.path)

    @property
    def game_id(self) -> str:
        return self.instance.game_id

    @property
    def task_name(self) -> str:
        return self.game.task.task_name

    def _ours(self) -> dict[str, Any]:
        """The built-in benchmark's own extra fields (`helper_agent`), from the instance or its game."""
        extra = (self.instance.model_extra or {}).get("helper_agent") or {}
        game_extra = (self.game.model_extra or {}).get("helper_agent") or {}
        return {**game_extra, **extra}

    @property
    def gold_program(self) -> str | None:
        """The built-in benchmark's gold program (oracles only; real TEACh has none)."""
        return self._ours().get("gold_program") or None

    @property
    def family(self) -> str | None:
        return self._ours().get("family") or None

    def initial_state(self) -> dict[str, Any]:
        try:
            return initial_state(self.game)
        except TeachFormatError as err:
            raise TeachFormatError(str(game_path(self.path, self.game_id)), err.key, err.problem) from None

    def start(self, env: Environment) -> None:
        """Put `env` where the agent starts: the game's initial state, then (EDH) the replayed
        history. The history is given, not the agent's trajectory, so the counters restart at 0."""
        env.reset(self.initial_state())
        if self.mode == "edh":
            assert isinstance(self.instance, EdhInstance)
            replay_history(env, self.instance)
            env.steps = env.failures = 0


def replay_history(env: Environment, instance: EdhInstance) -> int:
    """Replay an EDH instance's driver action history; returns how many actions were replayed.

    Actions that do not act on the world are skipped, and so is an action naming an object the
    environment does not have (a real TEACh history on a rebuilt scene).
    """
    replayed = 0
    for action in instance.driver_action_history:
        if action.action_name in NON_WORLD_ACTIONS:
            continue
        try:
            env.step(action.action_name, action.oid)
        except ValueError:
            continue
        replayed += 1
    return replayed


def load_instance(path: str | Path, mode: str | None = None) -> LoadedInstance:
    """Read an instance file and its game (from TEACh's folder layout); errors name the file."""
    path = Path(path)
    mode = mode or instance_mode(path)
    if mode not in ("tfd", "edh"):
        raise ValueError(f"mode must be tfd or edh, not {mode!r}")
    instance: TfdInstance | EdhInstance = read_tfd_instance(path) if mode == "tfd" else read_edh_instance(path)
    game = read_game(game_path(path, instance.game_id))
    task = tfd_check_task(game) if mode == "tfd" else edh_check_task(instance)  # type: ignore[arg-type]
    dialogue = instruction_text(instance.dialog(cleaned=True))
    return LoadedInstance(path=path, mode=mode, instance=instance, game=game, task=task, dialogue=dialogue)

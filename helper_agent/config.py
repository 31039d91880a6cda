"""Settings, in one place, read from the environment with the `HELPER_` prefix (or a `.env` file).

One class for every layer, because two classes drifted: the memory layer used to read the
environment but not `.env`, so `HELPER_CHROMA_HOST` written in `.env` silently left memories in the
local folder. `helper_agent.memory.settings.MemorySettings` is this class under its old name.

Every component takes explicit arguments; these settings only provide the defaults the CLI passes.
The `.env` file is read from the working directory; real environment variables win over it.

Limits (`max_*`) bound the work one input can cause: beyond a limit the input is refused with an
error that names the file, the field and the setting, never processed for minutes.
"""

from __future__ import annotations

import io
import re
from functools import lru_cache
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from dotenv.parser import parse_stream
from pydantic import Field, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

ENV_FILE = ".env"
"""The settings file read from the working directory (real environment variables win over it)."""

SETTINGS_CONFIG = SettingsConfigDict(env_prefix="HELPER_", env_file=None, extra="ignore")
"""How settings are read: `HELPER_<FIELD>` from the environment, then from `./.env` (checked first,
see `checked_env_file`; python-dotenv is handed the file only once it passed the checks)."""

MAX_ENV_FILE_BYTES = 64 * 1024
"""A `.env` holds a few dozen short lines; a bigger one is refused before it is parsed."""

MAX_ENV_LINE_CHARS = 4096
"""python-dotenv's parser is quadratic in a run of spaces (128 KB of them took 31 CPU s): a line
longer than this is refused before parsing, which keeps the worst case under a second."""


class SettingsError(ValueError):
    """A setting or settings file that cannot be used (a `.env` too big, not UTF-8 or not parsed; a
    `HELPER_MODEL_DIR` that cannot hold a folder): one line naming the file and line, or the setting."""

DEFAULT_MAX_SCENE_OBJECTS = 2000
"""AI2-THOR and TEACh scenes hold about 50-300 objects; 2000 leaves room for bigger houses."""

DEFAULT_MAX_GRID_CELLS = 250_000
"""0.25 m cells: 250,000 cells is a 125 m x 125 m floor, far above any AI2-THOR house."""

DEFAULT_MAX_INPUT_BYTES = 64 * 1024 * 1024
"""TEACh's largest game files are a few MB; a JSON input above 64 MiB is refused before parsing."""


class Settings(BaseSettings):
    """helper-agent's settings. Each field can be set as `HELPER_<FIELD>` in the environment or `.env`."""

    model_config = SETTINGS_CONFIG

    # ------------------------------------------------------------------------------ everything
    home: Path = Field(default=Path(".helper"), description="Folder for memories, checkpoints and outputs.")
    serve_llms: str = Field(
        default="", max_length=4096,
        description="Chat model specs a LangGraph-server client may pick with `context.llm`, comma-separated "
                    "(HELPER_LLM is always allowed); any other value is refused, so a client cannot make the "
                    "server dial a URL or load a model of its choosing.",
    )
    serve_folders: str = Field(
        default="", max_length=4096,
        description="Folders whose files a LangGraph-server client may name (`instance`, `-o pool=PATH`), "
                    "separated by the path separator (:); unset: a client names no server path at all.",
    )
    llm: str = Field(default="local", description="Chat model spec: local, local:1.5b (append @llama.cpp for that runtime), openai:gpt-4o, or a base URL.")
    llm_grammar: Literal["none", "llama.cpp", "vllm"] = Field(default="none", description="Grammar field an OpenAI-compatible server reads: none, llama.cpp (grammar) or vllm (guided_grammar).")
    llm_tokenizer: str | None = Field(
        default=None,
        description="The GGUF file an OpenAI-compatible server serves (a path, or local / local:1.5b for ours). With it and "
                    "HELPER_LLM_GRAMMAR set, programs are written line by line under grammars that know what the program "
                    "has defined, as the in-process model writes them; the client reads the file's chat template and "
                    "tokenizer (needs the llama-cpp-python extra). Unset: one request under the whole-program grammar.",
    )
    temperature: float = Field(default=0.0, ge=0, le=2, description="Sampling temperature of the chat model (0: greedy).")
    llm_timeout: float = Field(default=120.0, gt=0, le=86_400, description="Seconds one LLM call may take: a request to a server; the local OpenVINO model stops generating at it.")
    llm_stream: bool = Field(
        default=False,
        description="Stream replies from an OpenAI-compatible server, so a request past HELPER_LLM_TIMEOUT is cancelled "
                    "on the server too (its connection is closed; llama_cpp.server stops at the next token) instead of "
                    "running on while the retry waits behind it.",
    )
    llm_retries: int = Field(
        default=2, ge=0, le=100, description="Retries of an LLM call after a timeout, connection error, 429 or 5xx."
    )
    llm_prefix_cache: bool = Field(
        default=True,
        description="The local model serves the prompt prefix it shares with its previous call from its KV cache; "
                    "false evaluates every prompt token, as a server without prefix caching does (to time that case).",
    )
    local_weights: Literal["q8", "gguf", "int8", "int4"] | None = Field(
        default=None,
        description="How the local models' OpenVINO weights are made from their GGUF files (unset: each model's own, "
                    "q8 for the 0.5B and gguf for the 1.5B): q8 (every quantized tensor as 8-bit blocks of 32) or gguf "
                    "(the file's own 4- and 6-bit blocks), both read by OpenVINO GenAI with no converter; or int8/int4 "
                    "(transformers and nncf in the converter venv, `make install-converter`; the figures before issue 64).",
    )
    llm_flash_attn: bool = Field(
        default=False,
        description="The local model evaluates attention with llama.cpp's flash-attention kernels (faster prompt "
                    "evaluation on long prompts; greedy output may differ in near ties: see benchmarks/llm_bench.py).",
    )
    llm_budget_seconds: float | None = Field(
        default=None, gt=0, le=7 * 86_400, description="LLM seconds one evaluation episode may use (unset: no limit)."
    )
    max_steps: int = Field(
        default=1000, ge=1, le=1_000_000, description="TEACh's step limit per episode (the executor and the episode record read it)."
    )
    max_failures: int = Field(
        default=30, ge=1, le=1_000_000, description="TEACh's failed-action limit per episode (the executor and the episode record read it)."
    )
    seed: int = Field(default=0, ge=0, le=2**32 - 1, description="Default --seed of `helper eval`.")
    user: str | None = Field(default=None, description="Default --user of `helper routines` (else the login name).")
    debug: bool = Field(default=False, description="Show the traceback of errors the CLI reports in one line.")

    # ------------------------------------------------------------------------ input limits
    max_dialogue_chars: int = Field(
        default=6000, ge=200, le=10_000_000,
        description="Characters of an episode's dialogue the agent's prompts take; a longer one is clipped "
                    "(its start and end kept) and the episode's record says so.",
    )
    max_scene_objects: int = Field(
        default=DEFAULT_MAX_SCENE_OBJECTS, ge=1, le=10_000_000, description="Objects one scene (state file, game) may hold."
    )
    max_grid_cells: int = Field(
        default=DEFAULT_MAX_GRID_CELLS, ge=1, le=100_000_000, description="Floor cells (0.25 m) one scene's grid may span."
    )
    max_input_bytes: int = Field(
        default=DEFAULT_MAX_INPUT_BYTES, ge=1, le=1 << 40, description="Size of one JSON input file (game, instance, state)."
    )

    # ------------------------------------------------------------------------------- memory
    memory_dir: Path | None = Field(
        default=None,  # always a Path after validation: filled in from `home` below
        description="Folder of the embedded Chroma store (default: $HELPER_HOME/memory).",
    )
    chroma_host: str | None = Field(default=None, max_length=253, description="Chroma server host; embedded store when unset.")
    chroma_port: int = Field(default=8000, ge=1, le=65535, description="Chroma server port.")
    chroma_ssl: bool = Field(default=False, description="Use https for the Chroma server.")
    chroma_connect_timeout: float = Field(
        default=5.0, gt=0, le=3600, description="Seconds to wait for the Chroma server to accept a connection."
    )

    embeddings: str = Field(default="local", description="local | openai:MODEL | hash:DIM")
    embedding_batch_size: int = Field(default=64, ge=1, le=100_000, description="Texts embedded per batch.")
    embedding_cache_size: int = Field(default=50_000, ge=0, le=100_000_000, description="In-process LRU entries.")
    embedding_cache: bool = Field(
        default=True, description="Keep a persistent embedding cache (SQLite) in the memory folder."
    )

    hnsw_ef_construction: int = Field(default=100, ge=10, le=100_000, description="HNSW build effort (new collections).")
    hnsw_ef_search: int = Field(default=400, ge=10, le=100_000, description="HNSW search effort (recall vs latency).")
    hnsw_max_neighbors: int = Field(default=16, ge=4, le=1024, description="HNSW graph degree M (new collections).")

    memory_min_free_mb: int = Field(
        default=64, ge=0, le=1_000_000,
        description="MiB the embedded store's disk must have free before a write: Chroma that hits a full disk "
                    "mid-write leaves a store it cannot open again, so a write is refused before it starts.",
    )
    max_key_chars: int = Field(default=8192, ge=1, le=10_000_000, description="Characters of the text a memory record embeds (its key).")
    max_value_bytes: int = Field(default=262_144, ge=1, le=1 << 30, description="UTF-8 bytes of each stored field of a memory record.")
    routine_import_batch: int = Field(
        default=200, ge=1, le=5000, description="Routine versions committed per batch by an import."
    )

    examples_k: int = Field(default=3, ge=1, le=1000, description="HELPER: language-program examples retrieved.")
    corrections_k: int = Field(default=3, ge=1, le=1000, description="HELPER: correction examples retrieved.")
    fewshot_k: int = Field(default=9, ge=1, le=1000, description="LLM-Planner: in-context examples retrieved.")
    experience_k: int = Field(default=3, ge=1, le=1000, description="P-RAG: experience records retrieved.")
    experience_policy: Literal["append", "keep_latest_round"] = Field(
        default="append", description="P-RAG database update after each iteration."
    )
    scene_graph_k: int = Field(default=3, ge=1, le=1000, description="EmbodiedRAG: entities kept per query.")
    scene_graph_threshold: float = Field(default=0.5, description="EmbodiedRAG: minimum similarity.")
    routine_min_score: float = Field(default=0.4, description="Routines: minimum similarity to recall.")
    routine_exact_max: int = Field(
        default=50_000, ge=0, le=100_000_000,
        description="Routines: a user's collection of up to this many versions is searched exactly (every "
                    "routine recallable); a larger one through the approximate HNSW index.",
    )

    @field_validator("llm")
    @classmethod
    def _server_url(cls, value: str) -> str:
        """A server URL is checked when it is read: `HELPER_LLM='http://'` used to be dialed three times
        and reported as a server that did not answer, never as a malformed URL."""
        problem = server_url_problem(value) if value.strip().startswith(SERVER_SCHEMES) else None
        if problem:
            raise ValueError(f"the server URL is malformed: {problem} (write it as http://HOST:PORT/v1)")
        return value

    @field_validator("embeddings")
    @classmethod
    def _known_embeddings(cls, value: str) -> str:
        """`local[:PATH]`, `openai:MODEL` or `hash[:DIM]`, checked here so a typo fails when it is read,
        not inside every episode that embeds something."""
        kind, sep, arg = value.strip().partition(":")
        if kind == "local" and arg.strip() and not Path(arg.strip()).expanduser().is_dir():
            raise ValueError(f"local:PATH needs PATH to be a SentenceTransformer folder; {arg.strip()!r} is no folder")
        if kind == "local" or (kind == "openai" and arg.strip()):
            return value.strip()
        if kind == "hash" and (not sep or (arg.isdigit() and 1 <= int(arg) <= 65536)):
            return value.strip()
        raise ValueError("expected 'local', 'openai:MODEL' or 'hash[:DIM]' (DIM 1..65536)")

    @field_validator("home", "memory_dir", mode="before")
    @classmethod
    def _named_folder(cls, value: object) -> object:
        """An empty HELPER_HOME or HELPER_MEMORY_DIR used to mean the current folder (Path('') is '.'),
        so memories and checkpoints landed wherever the command ran."""
        if isinstance(value, str) and not value.strip():
            raise ValueError("a folder needs a name (unset the setting for the default)")
        return value

    @field_validator("chroma_host")
    @classmethod
    def _host_name(cls, value: str | None) -> str | None:
        """A host name the resolver takes: labels of 1-63 characters (a 300-letter host was an idna
        UnicodeError traceback deep inside the HTTP client)."""
        if value is None:
            return None
        host = value.strip()
        if not host:
            raise ValueError("a host needs a name (unset the setting for the embedded store)")
        if ":" not in host and any(not 1 <= len(label) <= 63 for label in host.rstrip(".").split(".")):
            raise ValueError("each dot-separated part of a host name holds 1 to 63 characters")
        return host

    @field_validator("user")
    @classmethod
    def _named_user(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("a user name needs a visible character")
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Arguments, then the environment, then `./.env` once `checked_env_file` accepted it."""
        env_file = checked_env_file(Path(ENV_FILE))
        if env_file is None:
            return init_settings, env_settings, file_secret_settings
        dotenv = DotEnvSettingsSource(settings_cls, env_file=env_file, env_file_encoding="utf-8")
        return init_settings, env_settings, dotenv, file_secret_settings

    @model_validator(mode="after")
    def _resolve_memory_dir(self) -> Settings:
        if self.memory_dir is None:
            self.memory_dir = self.home / "memory"
        self.memory_dir = Path(self.memory_dir).expanduser()
        return self

    @property
    def checkpoint_path(self) -> Path:
        return self.home / "checkpoints.sqlite"


SERVER_SCHEMES = ("http://", "https://")
"""How a chat-model spec names an OpenAI-compatible server (`HELPER_LLM`, `--llm`): by its base URL."""


def server_url_problem(url: str) -> str | None:
    """What makes `url` unusable as a server's base URL (`http[s]://HOST[:PORT][/PATH]`, optionally
    followed by `#MODEL`), or None. Read by the `llm` setting and by the chat-model factory (`--llm`)."""
    base = url.strip().partition("#")[0]
    if not base.startswith(SERVER_SCHEMES):
        return "it does not start with http:// or https://"
    if any(char.isspace() for char in base):
        return "it holds a space"
    parts = urlsplit(base)
    if not parts.hostname:
        return "it names no host"
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        return f"its port {parts.netloc.rpartition(':')[2]!r} is not a number from 1 to 65535"
    return None


def checked_env_file(path: Path) -> Path | None:
    """`path` when it is a `.env` file python-dotenv can parse quickly; None when there is none.

    Raises `SettingsError` naming the file (and line) for a file over `MAX_ENV_FILE_BYTES`, a line
    over `MAX_ENV_LINE_CHARS`, or bytes that are not UTF-8: each used to be a traceback or a hang.
    And for a statement python-dotenv cannot parse (an unterminated quote): python-dotenv skips it
    with a warning on stderr, so its settings were silently not applied.
    """
    try:
        if not path.is_file():
            return None
        size = path.stat().st_size
        if size > MAX_ENV_FILE_BYTES:
            raise SettingsError(f"{path}: {size} bytes; a settings file may hold at most {MAX_ENV_FILE_BYTES} bytes")
        with path.open("rb") as fh:
            data = fh.read(MAX_ENV_FILE_BYTES + 1)
    except OSError as exc:
        raise SettingsError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SettingsError(f"{path}: line {line} is not UTF-8 text (byte {data[exc.start]:#04x})") from None
    for number, line_text in enumerate(text.splitlines(), 1):
        if len(line_text) > MAX_ENV_LINE_CHARS:
            raise SettingsError(
                f"{path}: line {number} has {len(line_text)} characters; the limit is {MAX_ENV_LINE_CHARS}"
            )
    for binding in parse_stream(io.StringIO(text)):
        if binding.error:
            lines = binding.original.string.splitlines()
            blank = next((i for i, line in enumerate(lines) if line.strip()), 0)  # blank lines it starts with
            raise SettingsError(f"{path}: line {binding.original.line + blank} cannot be read as a setting "
                                f"({_statement(binding.original.string)}); {ENV_LINE_FORM}")
    return path


ENV_LINE_FORM = "write KEY=VALUE, and close a quoted value with the same quote"
"""What a `.env` line python-dotenv refuses should look like (its refusal says only where it stopped)."""


def _statement(text: str) -> str:
    """How a refused `.env` statement is named without showing its value (it may be a key): its
    name, and a quote that is not closed."""
    head = text.strip().splitlines()[0] if text.strip() else ""
    name, sep, value = head.partition("=")
    name = name.strip().removeprefix("export ").strip()[:60]
    if not sep:
        return f"{name!r} has no '='"
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", name):
        return f"{name!r} is not a setting's name"
    value = value.strip()
    if value[:1] in {"'", '"'}:
        if value[0] in value[1:]:
            return f"the value of {name} goes on after its closing {value[0]} quote"
        return f"the value of {name} opens a {value[0]} quote that is not closed"
    return f"the value of {name}"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once from the environment and `.env`."""
    return Settings()

"""What the LLM layer knows about an OpenAI-compatible client without importing it: whether a model
is one, and the request field a server reads a grammar from.

Its own module, below the factory, the client and the decoding arguments alike, because each of them
needs these facts: kept in `decoding_args` and `factory`, they closed the import circle
`decoding_args -> factory -> openai_compatible -> decoding_args` (issue 53).
"""

from __future__ import annotations

from typing import Any

GRAMMAR_FIELDS = {"llama.cpp": "grammar", "vllm": "guided_grammar"}
"""The request field that carries a grammar, by `HELPER_LLM_GRAMMAR`: llama.cpp's and
llama-cpp-python's servers read `grammar`, vLLM reads `guided_grammar`."""


def is_openai_client(model: Any) -> bool:
    """Whether `model` is langchain-openai's client (`BaseChatOpenAI` or a subclass: an
    OpenAI-compatible server, `openai:...`), told by its class names so that asking does not
    import the optional langchain-openai."""
    return any(c.__name__ == "BaseChatOpenAI" for c in type(model).__mro__)

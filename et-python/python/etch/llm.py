"""Text generation with a program ExecuTorch's LLM exporter wrote (``etch generate``
from Python).

    import etch

    text = etch.generate("llama.pte", "tokenizer.json", "Once upon a time",
                         max_new_tokens=32, temperature=0)
    for piece in etch.generate_stream("llama.pte", "tokenizer.json", "Once upon a time"):
        print(piece, end="", flush=True)

A text prompt gets the program's beginning-of-sequence token first and is encoded with
the tokenizer (a Hugging Face ``tokenizer.json`` or a SentencePiece ``tokenizer.model``);
a list of token ids is used as given. Generation stops at an end-of-sequence token, after
``max_new_tokens``, or when the context is full. The defaults are ``etch generate``'s.
:class:`TextGenerator` keeps a program loaded across prompts.
"""

from __future__ import annotations

import os
from typing import Iterator, List, Optional, Sequence, Union

from . import _etch

__all__ = ["TextGenerator", "generate", "generate_stream"]

Prompt = Union[str, Sequence[int]]
PathLike = Union[str, "os.PathLike[str]"]


class TextGenerator:
    """An LLM program loaded once, with its tokenizer, generating one sequence at a time
    (a new generation ends the previous one's iterator)."""

    def __init__(
        self,
        pte: PathLike,
        tokenizer: Optional[PathLike] = None,
        *,
        data_files: Sequence[PathLike] = (),
        threads: int = 1,
    ) -> None:
        self._generator = _etch._Generator(
            os.fspath(pte),
            os.fspath(tokenizer) if tokenizer is not None else None,
            [os.fspath(f) for f in data_files],
            threads,
        )
        self._last_run: Optional[int] = None

    @property
    def vocab_size(self) -> int:
        """The program's vocabulary size."""
        return self._generator.vocab_size

    @property
    def max_context_len(self) -> int:
        """The program's context: prompt and generated tokens together."""
        return self._generator.max_context_len

    def stream(
        self,
        prompt: Prompt,
        max_new_tokens: int = 64,
        temperature: float = 0.8,
        top_p: float = 0.9,
        seed: int = 0,
    ) -> Iterator[str]:
        """Yields the generated text a piece at a time (a token's text, or several
        tokens' when a character spans them). Without a tokenizer, each piece is a token
        id and a space. The prompt is prefilled when iteration starts."""
        prompt_arg = prompt if isinstance(prompt, str) else [int(t) for t in prompt]
        run = self._generator.start(prompt_arg, max_new_tokens, temperature, top_p, seed)
        self._last_run = run
        while True:
            piece = self._generator.next_piece(run)
            if piece is None:
                return
            yield piece

    def generate(
        self,
        prompt: Prompt,
        max_new_tokens: int = 64,
        temperature: float = 0.8,
        top_p: float = 0.9,
        seed: int = 0,
    ) -> str:
        """The generated text (the prompt excluded)."""
        return "".join(self.stream(prompt, max_new_tokens, temperature, top_p, seed))

    @property
    def last_tokens(self) -> List[int]:
        """The token ids the latest generation produced so far."""
        if self._last_run is None:
            return []
        return list(self._generator.tokens(self._last_run))


def generate(
    pte: PathLike,
    tokenizer: Optional[PathLike],
    prompt: Prompt,
    max_new_tokens: int = 64,
    temperature: float = 0.8,
    top_p: float = 0.9,
    seed: int = 0,
    *,
    data_files: Sequence[PathLike] = (),
    threads: int = 1,
) -> str:
    """Loads ``pte`` and returns the text it generates after ``prompt``."""
    llm = TextGenerator(pte, tokenizer, data_files=data_files, threads=threads)
    return llm.generate(prompt, max_new_tokens, temperature, top_p, seed)


def generate_stream(
    pte: PathLike,
    tokenizer: Optional[PathLike],
    prompt: Prompt,
    max_new_tokens: int = 64,
    temperature: float = 0.8,
    top_p: float = 0.9,
    seed: int = 0,
    *,
    data_files: Sequence[PathLike] = (),
    threads: int = 1,
) -> Iterator[str]:
    """Loads ``pte`` and yields the text it generates after ``prompt``, piece by piece."""
    llm = TextGenerator(pte, tokenizer, data_files=data_files, threads=threads)
    return llm.stream(prompt, max_new_tokens, temperature, top_p, seed)

"""What a run's answering model is, as plain data that can cross process boundaries."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memeval.llm.client import DEFAULT_TIMEOUT_S
from memeval.llm.judge import PROMPTS_SHA256, JudgeMode
from memeval.llm.pricing import Price
from memeval.llm.prompt import MAX_TOKENS, PROMPT_VERSION
from memeval.llm.rates import Rate
from memeval.llm.tokens import prompt_tokens_bound


class LlmSpec(BaseModel):
    """How a run's model answers. It travels inside task messages, so it holds no secret:
    each worker reads the key from its own environment."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(min_length=1)
    base_url: str
    max_tokens: int = Field(default=MAX_TOKENS, ge=1)
    prompt_version: str = PROMPT_VERSION
    price: Price | None = Field(default=None, description="None: the service bills nothing.")
    budget_scopes: list[str] = Field(default_factory=list)
    rates: list[Rate] = Field(default_factory=list)
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0)
    max_attempts: int = Field(default=6, ge=1)
    judges: list[LlmSpec] = Field(
        default_factory=list,
        description="`--judge`, repeatable: the models that grade each answer (same service "
        "and budget); the verdict is their majority.",
    )
    judge_mode: JudgeMode = Field(
        default=JudgeMode.strict,
        description="`--judge-mode`: `lenient` credits an answer on the right topic.",
    )
    prompts_sha256: str = Field(
        default=PROMPTS_SHA256,
        description="The hash of every answer and judge prompt this run was started with.",
    )

    @model_validator(mode="before")
    @classmethod
    def _one_judge_of_old(cls, data: Any) -> Any:
        """Runs stored before judges were repeatable name one `judge`: resume reads them."""
        if isinstance(data, dict) and "judge" in data:
            data = dict(data)
            judge = data.pop("judge")
            data.setdefault("judges", [] if judge is None else [judge])
        return data

    def hold_micros(self, chat: list[dict[str, str]], completion_tokens: int | None = None) -> int:
        """The most this call can cost when sent with `max_tokens=completion_tokens` (by
        default the run's own): every prompt token at its bound, every allowed completion
        token. Settling replaces it with the true cost."""
        if self.price is None:
            return 0
        tokens = self.max_tokens if completion_tokens is None else completion_tokens
        return self.price.micros(prompt_tokens_bound(self.model, chat), tokens)

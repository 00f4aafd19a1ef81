"""The stand-in chat model: a deterministic answer to each kind of request engines make.

- structured output (`response_format` `json_schema`): a valid instance of the schema;
- `json_object`: the shape of the first output example in the prompt, else `{"facts": [...]}`;
- tools: a call to the tool the request forces with valid arguments; free to choose, the first
  tool that needs no id of an existing item (LangMem's manager offers trustcall's `PatchDoc`,
  keyed by a `json_doc_id`, before its `Memory`: an id the stand-in would make up names no
  item, and the library then drops the whole write);
- memeval's own answer prompt (a `<pack>` and a `Question:`): the pack line that shares the
  most words with the question, as the extractive answer is graded;
- anything else: the sentences of the last user message.

`logprobs` are answered too (every token certain), since rerankers read them.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from memeval.models.facts import facts
from memeval.models.schema import example_shape, instance
from memeval.scoring.pack import extractive_answer, units

_PACK = re.compile(r"<pack>\n(.*)\n</pack>", re.S)
_QUESTION = re.compile(r"Question: (.*)$", re.S)


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Message(_Open):
    role: str
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):  # content parts: keep the text ones
            return "\n".join(str(p.get("text", "")) for p in self.content)
        return self.content or ""


class ResponseFormat(_Open):
    type: Literal["text", "json_object", "json_schema"] = "text"
    json_schema: dict[str, Any] | None = None


class ToolFunction(_Open):
    name: str
    parameters: dict[str, Any] = Field(default_factory=dict)


class Tool(_Open):
    type: str = "function"
    function: ToolFunction


class ChatRequest(_Open):
    model: str
    messages: list[Message] = Field(min_length=1)
    response_format: ResponseFormat | None = None
    tools: list[Tool] | None = None
    tool_choice: str | dict[str, Any] | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = None


def reply(request: ChatRequest) -> dict[str, Any]:
    """A chat completion in OpenAI's shape, usage counted at four characters a token."""
    prompt = "\n".join(m.text() for m in request.messages)
    last_user = next((m.text() for m in reversed(request.messages) if m.role == "user"), prompt)
    message: dict[str, Any] = {"role": "assistant", "content": None}
    finish = "stop"
    tool = _forced_tool(request)
    if tool is not None:
        arguments = instance(tool.parameters, facts(last_user))
        message["tool_calls"] = [
            {
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {"name": tool.name, "arguments": json.dumps(arguments)},
            }
        ]
        finish = "tool_calls"
    else:
        message["content"] = _content(request, prompt, last_user)
    completion = len(json.dumps(message)) // 4 + 1
    choice: dict[str, Any] = {"index": 0, "finish_reason": finish, "message": message}
    if request.logprobs:
        choice["logprobs"] = {"content": _certain(message["content"] or "", request.top_logprobs)}
    prompt_tokens = len(prompt) // 4 + 1
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
        "object": "chat.completion",
        "created": 0,
        "model": request.model,
        "choices": [choice],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": prompt_tokens + completion,
            "cost": 0,
        },
    }


def _forced_tool(request: ChatRequest) -> ToolFunction | None:
    if not request.tools or request.tool_choice == "none":
        return None
    if isinstance(request.tool_choice, dict):
        wanted = request.tool_choice.get("function", {}).get("name")
        return next((t.function for t in request.tools if t.function.name == wanted), None)
    tools = [t.function for t in request.tools]
    return next((t for t in tools if not _needs_an_id(t)), tools[0])


def _needs_an_id(tool: ToolFunction) -> bool:
    required = tool.parameters.get("required") or []
    return any(str(name).lower().endswith("id") for name in required)


def _content(request: ChatRequest, prompt: str, last_user: str) -> str:
    form = request.response_format or ResponseFormat()
    if form.type == "json_schema":
        spec = form.json_schema or {}
        return json.dumps(instance(spec.get("schema", {}), facts(last_user)))
    if form.type == "json_object":
        shape = example_shape(prompt)
        stated = facts(last_user)
        return json.dumps(instance(shape, stated) if shape else {"facts": stated})
    pack, question = _PACK.search(last_user), _QUESTION.search(last_user)
    if pack and question:
        return extractive_answer(units(pack.group(1)), question.group(1)) or "Not stated."
    return " ".join(facts(last_user))


def _certain(text: str, top: int | None) -> list[dict[str, Any]]:
    """Each word a token with log-probability 0 (certainty), alternatives likewise."""
    tokens = text.split() or [text]
    return [
        {
            "token": token,
            "logprob": 0.0,
            "bytes": list(token.encode()),
            "top_logprobs": [{"token": token, "logprob": 0.0, "bytes": list(token.encode())}]
            * min(top or 0, 1),
        }
        for token in tokens
    ]

"""Quickstart: a Pydantic model in, a validated instance of it out.

    python examples/python/quickstart.py      # MASKFORGE_MODEL_ID picks another model
"""

from typing import List, Literal

from pydantic import BaseModel, ConfigDict, Field

import maskforge
from example_model import chat_prompt, load_model


class Profile(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a closed object: no keys beyond these

    name: str = Field(max_length=24)
    age: int = Field(ge=0, le=120)
    languages: List[Literal["English", "French", "German", "Spanish"]] = Field(max_length=3)


def main() -> None:
    model, tokenizer = load_model()
    constrained = maskforge.from_transformers(model, tokenizer)
    generate = maskforge.Generator(constrained, Profile, max_json_whitespace=1)
    profile = generate(chat_prompt(tokenizer, "Create a profile of a translator as JSON."), max_new_tokens=128)
    assert isinstance(profile, Profile)
    print(repr(profile))


if __name__ == "__main__":
    main()

"""External `$ref`s resolved through a registry: never the network.

The schema refers to two documents by URI; `registry=` serves them (a mapping here; a callable
`uri -> schema or None` works too). A reference that the registry cannot serve raises
`ReferenceResolutionError` naming the URI.

    python examples/python/external_refs.py
"""

import maskforge
from example_model import chat_prompt, load_model

REGISTRY = {
    "https://schemas.example.com/country.json": {"enum": ["FR", "DE", "IT", "ES"]},
    "https://schemas.example.com/address.json": {
        "$id": "https://schemas.example.com/address.json",
        "type": "object",
        "properties": {
            "city": {"type": "string", "maxLength": 20},
            "country": {"$ref": "country.json"},  # relative to this document's $id
        },
        "required": ["city", "country"],
        "additionalProperties": False,
    },
}

SCHEMA = {
    "type": "object",
    "properties": {
        "home": {"$ref": "https://schemas.example.com/address.json"},
        "work": {"$ref": "https://schemas.example.com/address.json"},
    },
    "required": ["home"],
    "additionalProperties": False,
}


def main() -> None:
    model, tokenizer = load_model()
    constrained = maskforge.from_transformers(model, tokenizer)
    generate = maskforge.Generator(constrained, SCHEMA, registry=REGISTRY, max_json_whitespace=1)
    value = generate(chat_prompt(tokenizer, "Where does Marie live? Answer as JSON."), max_new_tokens=128)
    assert value["home"]["country"] in REGISTRY["https://schemas.example.com/country.json"]["enum"]
    print(value)
    try:
        maskforge.Generator(constrained, {"$ref": "https://schemas.example.com/missing.json"}, registry=REGISTRY)
    except maskforge.ReferenceResolutionError as error:
        print("unresolved, as expected:", error)


if __name__ == "__main__":
    main()

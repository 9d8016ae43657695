"""Showcase: one finite, closed schema exercising most of JSON Schema, in a real generation loop.

The schema uses const, enum, pattern, item schemas, contains, uniqueItems, minItems/maxItems,
additionalProperties false and $defs/$ref. `maskforge.Generator` decodes greedily with the
model's key/value cache, a mask at every step; the generated text (kept as text by a `Target`
whose parser is the identity) is checked against every constraint by hand, then by the
independent validator when `jsonschema` is installed.

    python examples/python/payment_instruction_showcase.py
"""

import json
import re

import maskforge
from example_model import chat_prompt, load_model
from maskforge.targets import Target

SCHEMA = {
    "$defs": {
        "currency": {"enum": ["EUR", "USD", "GBP"]},
        "iban": {"type": "string", "pattern": "^[A-Z]{2}[0-9]{2}[A-Z0-9]{4,16}$"},
    },
    "type": "object",
    "properties": {
        "kind": {"const": "payment_instruction"},
        "currency": {"$ref": "#/$defs/currency"},
        "amount": {"enum": ["5.00", "12.50", "99.99", "250.00"]},
        "from_account": {"$ref": "#/$defs/iban"},
        "to_account": {"$ref": "#/$defs/iban"},
        "priority": {"enum": ["normal", "urgent"]},
        "checks": {
            "type": "array",
            "items": {"enum": ["sanctions", "fraud", "limit", "duplicate"]},
            "minItems": 2,
            "maxItems": 4,
            "uniqueItems": True,
        },
        "approvals": {
            "type": "array",
            "items": {"enum": ["operator", "supervisor", "compliance"]},
            "maxItems": 3,
            "contains": {"const": "compliance"},
        },
    },
    "required": ["kind", "currency", "amount", "from_account", "to_account", "priority", "checks", "approvals"],
    "additionalProperties": False,
}

REQUEST = ("Write a payment instruction as JSON: pay 12.50 EUR from account DE44500105175407 to account "
           "FR7630006000011234, urgent, after sanctions and fraud checks, approved by compliance.")


def check(value: dict) -> None:
    """Every constraint of SCHEMA, by hand."""
    assert set(value) == set(SCHEMA["required"]), "closed object with every required key"
    assert value["kind"] == "payment_instruction"
    assert value["currency"] in ("EUR", "USD", "GBP")
    assert value["amount"] in ("5.00", "12.50", "99.99", "250.00")
    for key in ("from_account", "to_account"):
        assert re.fullmatch(r"[A-Z]{2}[0-9]{2}[A-Z0-9]{4,16}", value[key]), key
    assert value["priority"] in ("normal", "urgent")
    checks = value["checks"]
    assert 2 <= len(checks) <= 4 and len(set(checks)) == len(checks)
    assert set(checks) <= {"sanctions", "fraud", "limit", "duplicate"}
    approvals = value["approvals"]
    assert len(approvals) <= 3 and "compliance" in approvals
    assert set(approvals) <= {"operator", "supervisor", "compliance"}


def main() -> None:
    model, tokenizer = load_model()
    constrained = maskforge.from_transformers(model, tokenizer)
    generate = maskforge.Generator(constrained, Target(json.dumps(SCHEMA), lambda text: text, "the schema"),
                                   max_json_whitespace=1)
    # The model is told the schema too: the mask guarantees validity, the prompt makes it apt.
    request = f"{REQUEST}\nUse this JSON Schema: {json.dumps(SCHEMA)}"
    text = generate(chat_prompt(tokenizer, request), max_new_tokens=600)  # greedy: reproducible
    value = json.loads(text)
    check(value)
    try:
        import jsonschema
    except ImportError:
        pass
    else:
        jsonschema.validate(value, SCHEMA)
    print(text)


if __name__ == "__main__":
    main()

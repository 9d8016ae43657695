"""MaskForge inside serving engines.

- :mod:`maskforge.integrations.vllm`: a vLLM structured-output backend and grammar.
- :mod:`maskforge.integrations.sglang`: an SGLang grammar backend and grammar object.
- :mod:`maskforge.integrations.llama_cpp`: a logits processor for llama-cpp-python.

Each module imports its engine only when one of its objects is built against it; the request
kinds they share (JSON, JSON object, regex, choice, structural tag; grammars refused) are read
in :mod:`maskforge.integrations.requests`. See docs/serving.md.
"""

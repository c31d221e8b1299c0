"""Stand-ins for what a run talks to, for testing a model setup, a policy plug-in or a bench without a model
or a key (docs/python.md#testing-without-a-model):

- `chat_server.ChatServer`: an OpenAI-compatible chat server on loopback that answers each request with
  what a function of yours returns (a reply's text, an error, a delay, a dropped connection) and keeps every
  request; `--model openai/NAME --api-base` its `api_base`.
- `schema_stub.obeying(seed)`: an answer for it that obeys the JSON schema each request is sent, as a
  constrained decoder would.
- `local_model.serving(log, SMOLLM2)`: a real small model on llama-cpp-python's server (the `local` extra),
  or on llama.cpp's own (`server=LLAMA_SERVER`).
- `hash_embedder.HashEmbedder`: vectors from a hash of each text, no model loaded, for runs of policies that
  read no memories (`ExplorationRun(config, embedder=HashEmbedder())`).

The product never imports this package; the tests and the benches do.
"""

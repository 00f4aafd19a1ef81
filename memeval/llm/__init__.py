"""Model answers: an OpenAI-compatible client, the versioned answer prompt, prices, and the
Answerer that the runner calls for each probe and fixture query, within rate and budget."""

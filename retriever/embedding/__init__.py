"""Dense embeddings: the encoder protocol, the embedding cache, all-MiniLM-L6-v2 on ONNX Runtime (the graph
builder, the model files, the per-home model cache) and the sentence-transformers reference used by tests."""

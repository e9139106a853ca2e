"""A BERTScore-style metric over toy embeddings."""

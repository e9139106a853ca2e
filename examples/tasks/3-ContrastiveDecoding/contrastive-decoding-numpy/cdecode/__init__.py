"""Contrastive decoding with toy bigram models."""

"""Where lmrbench's tasks meet the frameworks agent researchers already run: front ends over ``benchmark``, each
needing its own optional extra (``inspect``: Inspect AI)."""

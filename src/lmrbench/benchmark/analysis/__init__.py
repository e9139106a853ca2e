"""The paper's analyses beyond Table 2: repository structure, a logistic regression of success, familiarity
(contamination) scores, and figures."""

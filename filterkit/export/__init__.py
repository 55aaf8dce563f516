"""A trained model as code that runs without filterkit (issue 78): ``filterkit export MODEL --c OUT.c`` writes one
dependency-free C source file that scores a document as ``filterkit predict`` does (docs/serving.md)."""

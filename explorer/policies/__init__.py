"""Decision policies behind one seam, `decide(prompt, context) -> DecisionOutcome` (nodes/interfaces.py); factory.py makes them."""

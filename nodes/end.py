from nodes.framework import Node


class EndNode(Node):
    """Where an agent's flow stops: it has no successor, so PocketFlow ends the flow quietly."""

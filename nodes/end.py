from pocketflow import Node


class EndNode(Node):
    """Where an agent's flow stops once its step budget is spent."""

    def post(self, shared, prep_res, exec_res):
        shared["finished"] = True
        return None

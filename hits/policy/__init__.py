"""The rules every provider shares: what work costs with fees (pure), worker requirements (pure), and
the money guard on undoing a review decision."""

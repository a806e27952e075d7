"""The analyst agent (seed 001, FinAcumen): deterministic tools, an answer gate, a program-of-thought loop.

Source: ../shared/seeds/001_70c6b08e66b7be55.txt, section 4.4 ("Financial Tools") and section 4.3 (the solver).
Rooms: :mod:`.results` (what a tool returns), :mod:`.arithmetic` (``calculate``, ``compare``, ``date_diff``,
``scale``), :mod:`.tables` (``table_cell``, ``table_column``), :mod:`.facts` (``fact_lookup``, ``ratio`` over the
graph), :mod:`.registry` (name -> function and JSON schema), :mod:`.gate` (the answer gate), :mod:`.loop`
(program of thought: the LLM picks operands and an expression, ``calculate`` evaluates, the gate decides),
:mod:`.evidence` (``search_evidence``: the retrieval contract as a tool, point in time), :mod:`.toolloop` (the LLM
calls the tools by their JSON schemas and answers through the gate), :mod:`.reader` (the agent as the report
batch's reader).
"""

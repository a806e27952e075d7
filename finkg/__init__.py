"""finkg: the application package. It composes ``kg``, ``retrieval``, ``generation`` and
``ingest`` into the command line (``finkg.cli``), reads configuration (``finkg.config``) and runs
the local Neo4j server (``finkg.neo4j_server``)."""

__version__ = "0.1.0"

// name: entity-neighbourhood
// shows: An entity's neighbourhood as of a date: the extracted triples (AFFECT, INDICATE, BELONG_TO,
//   EQUAL_TO, MAY_LEAD_TO) that touch it and whose source chunk was available at $as_of (an ISO date
//   or UTC instant: Chunk.available_at <= $as_of; undated chunks are left out), with the chunk and its
//   document. $entity is an entity id ("<type>:<normalized name>") or its name (any case); triples come
//   from `finkg extract`. Click a triple for its sentence, verification and cluster.
// :param entity => 'federal funds rate'
// :param as_of => '2008-12-31T23:59:59Z'
MATCH (e:Entity)
WHERE e.id = $entity OR toLower(e.name) = toLower($entity)
MATCH (e)-[triple:AFFECT|INDICATE|BELONG_TO|EQUAL_TO|MAY_LEAD_TO]-(other:Entity)
MATCH (chunk:Chunk {id: triple.chunk_id})
WHERE datetime(chunk.available_at) <= datetime($as_of)
OPTIONAL MATCH (document:Document)-[has:HAS_CHUNK]->(chunk)
RETURN e, triple, other, chunk, has, document
ORDER BY chunk.available_at DESC
LIMIT 200

// name: top-communities
// shows: The top communities by PageRank: the $communities communities of extracted entities with the
//   largest summed PageRank, their $per_community entities of highest PageRank, and the triples among
//   those entities. Entity.pagerank and Entity.community are written by `finkg graph analyze` (the last
//   analysis wins); the Table view lists community, its summed PageRank and each entity's.
// :param communities => 5
// :param per_community => 8
MATCH (e:Entity)
WHERE e.community IS NOT NULL AND e.pagerank IS NOT NULL
WITH e
ORDER BY e.pagerank DESC
WITH e.community AS community, sum(e.pagerank) AS weight, collect(e)[..$per_community] AS top
ORDER BY weight DESC
LIMIT $communities
WITH collect({community: community, weight: weight, top: top}) AS rows
WITH rows, reduce(acc = [], row IN rows | acc + row.top) AS tops
UNWIND rows AS row
UNWIND row.top AS e
OPTIONAL MATCH (e)-[triple:AFFECT|INDICATE|BELONG_TO|EQUAL_TO|MAY_LEAD_TO]->(other:Entity)
WHERE other IN tops
RETURN row.community AS community, row.weight AS community_pagerank, e.pagerank AS pagerank, e, triple, other
ORDER BY community_pagerank DESC, pagerank DESC

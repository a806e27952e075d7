// name: report-citations
// shows: What a report cites: the facts with the filing and company that reported them, the chunks
//   with their document, and the triples (a CITES link lands on the triple's head entity; its
//   triple_id names the relationship, drawn here to its tail). Click a CITES link for kind, cited (the
//   answer cites it) and score; report ids are "report:<question id>:<system>:<mode>" (`finkg report`).
// :param report_id => 'report:cn-yields-2015q2:tfr:two-stage'
MATCH (r:Report {id: $report_id})-[cites:CITES]->(x)
OPTIONAL MATCH (x:Fact)<-[reports:REPORTS]-(filing:Filing)<-[filed:FILED]-(company:Company)
OPTIONAL MATCH (x:Chunk)<-[has:HAS_CHUNK]-(document:Document)
OPTIONAL MATCH (x:Entity)-[triple]->(tail:Entity) WHERE triple.id = cites.triple_id
RETURN r, cites, x, reports, filing, filed, company, has, document, triple, tail

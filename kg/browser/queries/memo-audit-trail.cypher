// name: memo-audit-trail
// shows: A memo's audit trail: the memo, the filing it is about and the company that filed it, each
//   claim, and each fact a claim cites with its concept and the filing that reported it. Click a Claim
//   for its status (exact / repaired / unsupported / not_applicable), gold and original values and
//   repairs; memo ids are "<system>:<adsh>" (`finkg memo`).
// :param memo_id => 'structured:0001193125-09-189177'
MATCH (m:Memo {id: $memo_id})-[about:ABOUT]->(f:Filing)<-[filed:FILED]-(c:Company)
OPTIONAL MATCH (m)-[has:HAS_CLAIM]->(claim:Claim)
OPTIONAL MATCH (claim)-[cites:CITES]->(fact:Fact)<-[reports:REPORTS]-(source:Filing)
OPTIONAL MATCH (fact)-[of:OF_CONCEPT]->(concept:Concept)
RETURN m, about, f, filed, c, has, claim, cites, fact, reports, source, of, concept

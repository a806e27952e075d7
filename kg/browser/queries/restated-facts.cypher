// name: restated-facts
// shows: Restated facts: a company's figures reported with different values in different filings
//   (the same tag, period end ddate, quarters qtrs and unit), each value with the filing that reported
//   it, for company CIK $cik and tag $tag (null: every tag; the 10 groups of the earliest periods).
//   Click a Fact for its value; the Table view lists the values by filing date.
// :param cik => 1640147
// :param tag => 'ComprehensiveIncomeNetOfTax'
MATCH (c:Company {cik: $cik})-[:FILED]->(:Filing)-[:REPORTS]->(x:Fact)
WHERE $tag IS NULL OR x.tag = $tag
WITH c, x.tag AS tag, x.ddate AS ddate, x.qtrs AS qtrs, x.uom AS uom, collect(x) AS facts,
     count(DISTINCT x.value) AS n_values, count(DISTINCT x.adsh) AS n_filings
WHERE n_values > 1 AND n_filings > 1
WITH c, tag, ddate, qtrs, uom, facts
ORDER BY ddate, tag, qtrs
LIMIT 10
UNWIND facts AS fact
MATCH (c)-[filed:FILED]->(filing:Filing)-[reports:REPORTS]->(fact)
RETURN c, filed, filing, reports, fact, tag, ddate, qtrs, uom, fact.value AS value, filing.filed AS filed_on
ORDER BY tag, ddate, qtrs, filed_on

// name: indicator-around-date
// shows: An indicator around a date: Indicator $code and its observations dated within $days days of
//   $date (an ISO date), each with its publication time available_at (what a point-in-time reader could
//   see then). Indicator codes: `MATCH (i:Indicator) RETURN i.code, i.name`.
// :param code => 'cn_treasury_yield_10y'
// :param date => '2015-06-30'
// :param days => 10
MATCH (i:Indicator {code: $code})-[has:HAS_OBSERVATION]->(o:Observation)
WHERE date($date) - duration({days: $days}) <= o.date <= date($date) + duration({days: $days})
RETURN i, has, o, o.date AS date, o.value AS value, o.available_at AS available_at
ORDER BY o.date

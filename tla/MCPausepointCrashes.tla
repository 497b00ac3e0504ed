-------------------- MODULE MCPausepointCrashes --------------------
(* TLC only: two crashes (inside the effect; between a consume and the continuation), key rotation with the drain proof (two keys), a clock with three values around the expiry, one resume server. *)
EXTENDS Pausepoint

MCScripts ==
  << << [kind |-> "effect", key |-> "a"], [kind |-> "ask", names |-> <<"q">>], [kind |-> "end"] >> >>

MCParents == <<0>>

============================================================

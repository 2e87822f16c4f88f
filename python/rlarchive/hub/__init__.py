"""An archive on a model hub: its model card (:mod:`.card`) and the folder to upload (:mod:`.package`)."""

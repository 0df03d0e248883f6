"""Voice input: the user talks to the companions through a microphone.

The core's part is Qt-free and device-free: the audio it is given (:mod:`.audio`), when the user speaks
(:mod:`.detection`), whether what the microphone hears is the companions' own voice (:mod:`.echo`), the recognizer
port (:mod:`.recognition`), the events the window shows (:mod:`.events`) and the controller that ties them to the
conversation (:mod:`.listening`). The microphone, the voice-activity detector and the recognizers are adapters in
``app/devices``. (The turn history each participant heard is ``companions/conversation/heard_history.py``.)
"""

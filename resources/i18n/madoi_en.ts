<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en">
<context>
    <name>chat</name>
    <message numerus="yes">
        <source>%n messages · {when}</source>
        <translation>
            <numerusform>%n message · {when}</numerusform>
            <numerusform>%n messages · {when}</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>“{title}” and its %n messages will be deleted for good.</source>
        <translation>
            <numerusform>“{title}” and its %n message will be deleted for good.</numerusform>
            <numerusform>“{title}” and its %n messages will be deleted for good.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>main_window</name>
    <message numerus="yes">
        <source>Madoi started with %n problems</source>
        <translation>
            <numerusform>Madoi started with %n problem</numerusform>
            <numerusform>Madoi started with %n problems</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>search</name>
    <message numerus="yes">
        <source>%n hits for “{query}” in {ms} ms</source>
        <translation>
            <numerusform>%n hit for “{query}” in {ms} ms</numerusform>
            <numerusform>%n hits for “{query}” in {ms} ms</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n documents indexed</source>
        <translation>
            <numerusform>%n document indexed</numerusform>
            <numerusform>%n documents indexed</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n documents indexed ({changed} new or changed)</source>
        <translation>
            <numerusform>%n document indexed ({changed} new or changed)</numerusform>
            <numerusform>%n documents indexed ({changed} new or changed)</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n citations</source>
        <translation>
            <numerusform>%n citation</numerusform>
            <numerusform>%n citations</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n searches</source>
        <translation>
            <numerusform>%n search</numerusform>
            <numerusform>%n searches</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n sources</source>
        <translation>
            <numerusform>%n source</numerusform>
            <numerusform>%n sources</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>settings</name>
    <message numerus="yes">
        <source>OK: %n models</source>
        <translation>
            <numerusform>OK: %n model</numerusform>
            <numerusform>OK: %n models</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>turns</name>
    <message numerus="yes">
        <source>This conversation has %n messages: write to continue it.</source>
        <translation>
            <numerusform>This conversation has %n message: write to continue it.</numerusform>
            <numerusform>This conversation has %n messages: write to continue it.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>the limit of %n turns was reached</source>
        <translation>
            <numerusform>the limit of %n turn was reached</numerusform>
            <numerusform>the limit of %n turns was reached</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>you came back after %n minutes</source>
        <translation>
            <numerusform>you came back after %n minute</numerusform>
            <numerusform>you came back after %n minutes</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>you were quiet for %n minutes</source>
        <translation>
            <numerusform>you were quiet for %n minute</numerusform>
            <numerusform>you were quiet for %n minutes</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>voice_engines</name>
    <message numerus="yes">
        <source>%n engines found</source>
        <translation>
            <numerusform>%n engine found</numerusform>
            <numerusform>%n engines found</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n voices</source>
        <translation>
            <numerusform>%n voice</numerusform>
            <numerusform>%n voices</numerusform>
        </translation>
    </message>
</context>
</TS>

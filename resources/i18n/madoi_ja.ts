<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="ja_JP">
<context>
    <name>NotificationArea</name>
    <message>
        <source>Madoi keeps running; details are in the log file.</source>
        <translation>円居は動き続けます。詳しくはログファイルにあります。</translation>
    </message>
    <message>
        <source>Error in {where}</source>
        <translation>{where} でエラーが起きました</translation>
    </message>
</context>
<context>
    <name>Toast</name>
    <message>
        <source>Dismiss</source>
        <translation>閉じる</translation>
    </message>
    <message>
        <source>Dismiss notification</source>
        <translation>通知を閉じる</translation>
    </message>
</context>
<context>
    <name>about</name>
    <message>
        <source>Neural voice, once downloaded: Kokoro-82M by hexgrad (Apache-2.0), its ONNX export by thewh1teagle (kokoro-onnx, MIT licence); Japanese read for it with misaki&apos;s kana table (hexgrad, Apache-2.0).</source>
        <translation>ニューラル音声（ダウンロードした場合）: Kokoro-82M（hexgrad、Apache-2.0）、その ONNX 変換は thewh1teagle（kokoro-onnx、MIT ライセンス）。日本語の読みには misaki のかな表（hexgrad、Apache-2.0）を使っています。</translation>
    </message>
    <message>
        <source>Hearing, once downloaded: Whisper base by OpenAI (MIT licence), converted for CTranslate2 by SYSTRAN (faster-whisper, MIT licence).</source>
        <translation>音声認識（ダウンロードした場合）: Whisper base（OpenAI、MIT ライセンス）、CTranslate2 への変換は SYSTRAN（faster-whisper、MIT ライセンス）。</translation>
    </message>
    <message>
        <source>&amp;About Madoi</source>
        <translation>円居について(&amp;A)</translation>
    </message>
    <message>
        <source>About Madoi</source>
        <translation>円居について</translation>
    </message>
    <message>
        <source>Madoi: AI companions who talk with you and with each other, on your computer.</source>
        <translation>円居（Madoi）: あなたと、そして仲間どうしで話す AI コンパニオンが、あなたのコンピューターの中にいます。</translation>
    </message>
    <message>
        <source>Voices</source>
        <translation>音声</translation>
    </message>
    <message>
        <source>Japanese voice: HTS Voice &quot;Mei&quot;, Copyright (c) 2009-2013 Nagoya Institute of Technology, Department of Computer Science; released by the MMDAgent Project Team; licensed under {licence}. Spoken through Open JTalk (pyopenjtalk-plus, MIT licence).</source>
        <translation>日本語の声: HTS Voice &quot;Mei&quot;（メイ）、Copyright (c) 2009-2013 Nagoya Institute of Technology, Department of Computer Science（名古屋工業大学 情報工学科）、MMDAgent Project Team 公開、{licence} ライセンス。Open JTalk（pyopenjtalk-plus、MIT ライセンス）で話します。</translation>
    </message>
    <message>
        <source>Other languages: the system&apos;s voices (espeak-ng, SAPI5 or NSSpeechSynthesizer) through pyttsx3.</source>
        <translation>ほかの言語: システムの音声（espeak-ng、SAPI5 または NSSpeechSynthesizer）を pyttsx3 で使います。</translation>
    </message>
</context>
<context>
    <name>camera</name>
    <message>
        <source>Camera</source>
        <translation>カメラ</translation>
    </message>
    <message>
        <source>Camera on</source>
        <translation>カメラ使用中</translation>
    </message>
    <message>
        <source>The camera is on: the companions can look through it</source>
        <translation>カメラが動いています。コンパニオンはこのカメラで見ることができます</translation>
    </message>
    <message>
        <source>Live preview</source>
        <translation>ライブプレビュー</translation>
    </message>
    <message>
        <source>Waiting for the camera…</source>
        <translation>カメラの映像を待っています…</translation>
    </message>
    <message>
        <source>No camera</source>
        <translation>カメラを使えません</translation>
    </message>
    <message>
        <source>The preview failed</source>
        <translation>プレビューを表示できません</translation>
    </message>
    <message>
        <source>{who} looked</source>
        <translation>{who}が見ました</translation>
    </message>
    <message>
        <source>{who} looked through the camera</source>
        <translation>{who}がカメラで見ました</translation>
    </message>
    <message>
        <source>{who} looked through the camera · {time}</source>
        <translation>{who}がカメラで見ました · {time}</translation>
    </message>
    <message>
        <source>You showed them the camera · {time}</source>
        <translation>カメラの映像を見せました · {time}</translation>
    </message>
    <message>
        <source>{who} wanted to look, but the camera is off · {time}</source>
        <translation>{who}がカメラで見ようとしましたが、カメラはオフです · {time}</translation>
    </message>
    <message>
        <source>The companions noticed you · {time}</source>
        <translation>みんながあなたに気づきました · {time}</translation>
    </message>
    <message>
        <source>The companions noticed you came back · {time}</source>
        <translation>みんながあなたが戻ったことに気づきました · {time}</translation>
    </message>
    <message>
        <source>The companions noticed you left · {time}</source>
        <translation>みんながあなたが席を離れたことに気づきました · {time}</translation>
    </message>
    <message>
        <source>The companions noticed someone with you · {time}</source>
        <translation>みんながあなたのそばにいる誰かに気づきました · {time}</translation>
    </message>
    <message>
        <source>The companions noticed you holding something up · {time}</source>
        <translation>みんながあなたが何かをかざしているのに気づきました · {time}</translation>
    </message>
    <message>
        <source>The companions noticed the light went out · {time}</source>
        <translation>みんなが明かりが消えたことに気づきました · {time}</translation>
    </message>
    <message>
        <source>what the camera saw</source>
        <translation>カメラが見たもの</translation>
    </message>
    <message>
        <source>{who} looked at {time}</source>
        <translation>{who}が{time}に見たもの</translation>
    </message>
    <message>
        <source>You showed them this at {time}</source>
        <translation>{time}に見せたもの</translation>
    </message>
    <message>
        <source>Noticed at {time}</source>
        <translation>{time}に気づいたもの</translation>
    </message>
    <message>
        <source>This picture is no longer kept: only the last {n} looks keep their pictures.</source>
        <translation>この画像はもう残っていません（画像が残るのは最近の{n}回分だけです）。</translation>
    </message>
    <message>
        <source>{width} × {height} pixels</source>
        <translation>{width} × {height} ピクセル</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>閉じる</translation>
    </message>
    <message>
        <source>Show them</source>
        <translation>見せる</translation>
    </message>
    <message>
        <source>Send your message with what the camera sees now: the companions get a description of the picture, and the chat keeps the picture</source>
        <translation>いまカメラに映っているものをメッセージと一緒に送ります。コンパニオンには映像の説明が届き、画像はチャットに残ります</translation>
    </message>
    <message>
        <source>Looking…</source>
        <translation>撮影中…</translation>
    </message>
    <message>
        <source>Not shown: {error}. Your text is still in the box.</source>
        <translation>見せられませんでした: {error}。入力した文はそのまま残っています。</translation>
    </message>
</context>
<context>
    <name>camera.reason</name>
    <message>
        <source>not started</source>
        <translation>まだ起動していません</translation>
    </message>
    <message>
        <source>turned off in the settings</source>
        <translation>設定でオフになっています</translation>
    </message>
    <message>
        <source>you turned the camera off (the switch in the status bar)</source>
        <translation>カメラをオフにしました（ステータスバーのスイッチ）</translation>
    </message>
    <message>
        <source>closed while looking</source>
        <translation>見ている途中で閉じられました</translation>
    </message>
    <message>
        <source>the camera has not started yet</source>
        <translation>カメラがまだ起動していません</translation>
    </message>
    <message>
        <source>no video device {x}</source>
        <translation>ビデオデバイス {x} がありません</translation>
    </message>
    <message>
        <source>no such device or video file {x}</source>
        <translation>デバイスまたは動画ファイル {x} が見つかりません</translation>
    </message>
    <message>
        <source>cannot open {x}</source>
        <translation>{x} を開けません</translation>
    </message>
    <message>
        <source>the source stopped delivering frames</source>
        <translation>映像が届かなくなりました</translation>
    </message>
    <message>
        <source>no frame within {x} s</source>
        <translation>{x} 秒以内に映像が届きませんでした</translation>
    </message>
    <message>
        <source>the devices are not running</source>
        <translation>デバイスが動いていません</translation>
    </message>
    <message>
        <source>a preview frame could not be decoded</source>
        <translation>プレビューの映像を読み取れませんでした</translation>
    </message>
</context>
<context>
    <name>camera_switch</name>
    <message>
        <source>Camera on</source>
        <translation>カメラ オン</translation>
    </message>
    <message>
        <source>Camera off</source>
        <translation>カメラ オフ</translation>
    </message>
    <message>
        <source>in use</source>
        <translation>使用中</translation>
    </message>
    <message>
        <source>watching</source>
        <translation>見守り中</translation>
    </message>
    <message>
        <source>Let them notice you</source>
        <translation>見守ってもらう</translation>
    </message>
    <message>
        <source>The companions notice when you arrive, leave or come back: a few small pictures a second are read on this computer, never sent or kept. The camera stays open (its light on) while it watches.</source>
        <translation>あなたが来たとき、離れたとき、戻ってきたときにコンパニオンが気づきます。1 秒に数枚の小さな画像をこのコンピューターの中だけで読み取り、送ることも残すこともありません。見守っている間はカメラが開いたまま（ランプが点灯）になります。</translation>
    </message>
    <message>
        <source>Noticing is on: a few small pictures a second, read on this computer and sent nowhere, tell the companions when you arrive, leave or come back.</source>
        <translation>見守りがオンです。1 秒に数枚の小さな画像をこのコンピューターの中だけで読み取り（どこにも送りません）、あなたが来たとき、離れたとき、戻ってきたときをコンパニオンに伝えます。</translation>
    </message>
    <message>
        <source>The companions may look through the camera when they need to; every look is shown in the chat. Click to turn the camera off for everyone.</source>
        <translation>コンパニオンは必要なときにカメラで見ることができます。見たときは毎回チャットに表示されます。クリックすると全員に対してカメラをオフにします。</translation>
    </message>
    <message>
        <source>The camera is open now.</source>
        <translation>いまカメラが開いています。</translation>
    </message>
    <message>
        <source>Nobody can look through the camera: it stays closed. Click to turn it on.</source>
        <translation>誰もカメラで見ることはできません（カメラは閉じたままです）。クリックするとオンにします。</translation>
    </message>
    <message>
        <source>The switch holds for now, but could not be saved: {error}</source>
        <translation>切り替えは今回は有効ですが、保存できませんでした: {error}</translation>
    </message>
    <message>
        <source>No camera</source>
        <translation>カメラなし</translation>
    </message>
    <message>
        <source>There is no camera to switch: {reason}. Set one in Settings (Camera and voice).</source>
        <translation>切り替えるカメラがありません: {reason}。設定（カメラと音声）でカメラを指定してください。</translation>
    </message>
</context>
<context>
    <name>chat</name>
    <message>
        <source>You</source>
        <translation>あなた</translation>
    </message>
    <message>
        <source>Everyone</source>
        <translation>全員</translation>
    </message>
    <message>
        <source>To: {names}</source>
        <translation>宛先: {names}</translation>
    </message>
    <message>
        <source>Who receives your next message (everyone, or the companions you tick)</source>
        <translation>次のメッセージの宛先（全員、またはチェックしたコンパニオン）</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>送信</translation>
    </message>
    <message>
        <source>composing…</source>
        <translation>考え中…</translation>
    </message>
    <message>
        <source>waiting to speak…</source>
        <translation>話す順番を待っています…</translation>
    </message>
    <message>
        <source>speaking</source>
        <translation>話しています</translation>
    </message>
    <message>
        <source>Not sent: {error}. Your text is still in the box.</source>
        <translation>送信できませんでした: {error}。入力した文はそのまま残っています。</translation>
    </message>
    <message>
        <source>the companions have not started yet</source>
        <translation>コンパニオンがまだ起動していません</translation>
    </message>
    <message>
        <source>the companions have no language model yet (see above, or the settings: Ctrl+,)</source>
        <translation>コンパニオンにまだ言語モデルがありません（上の案内か、設定 Ctrl+, から）</translation>
    </message>
    <message>
        <source>Earlier messages of this conversation are not shown here; search finds them.</source>
        <translation>この会話のこれより前のメッセージは表示していません（検索で見つかります）。</translation>
    </message>
    <message>
        <source>edited</source>
        <translation>編集済み</translation>
    </message>
    <message>
        <source>happy</source>
        <translation>うれしい</translation>
    </message>
    <message>
        <source>sad</source>
        <translation>かなしい</translation>
    </message>
    <message>
        <source>angry</source>
        <translation>おこっている</translation>
    </message>
    <message>
        <source>neutral</source>
        <translation>ふつう</translation>
    </message>
    <message>
        <source>Conversations</source>
        <translation>会話</translation>
    </message>
    <message>
        <source>New</source>
        <translation>新しい会話</translation>
    </message>
    <message>
        <source>Start a new conversation</source>
        <translation>新しい会話を始めます</translation>
    </message>
    <message>
        <source>Delete…</source>
        <translation>削除…</translation>
    </message>
    <message>
        <source>Delete the selected conversation</source>
        <translation>選んだ会話を削除します</translation>
    </message>
    <message>
        <source>New conversation</source>
        <translation>新しい会話</translation>
    </message>
    <message>
        <source>today {time}</source>
        <translation>今日 {time}</translation>
    </message>
    <message>
        <source>yesterday {time}</source>
        <translation>昨日 {time}</translation>
    </message>
    <message numerus="yes">
        <source>%n messages · {when}</source>
        <translation>
            <numerusform>%n 件 · {when}</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>“{title}” and its %n messages will be deleted for good.</source>
        <translation>
            <numerusform>「{title}」と %n 件のメッセージを完全に削除します。元に戻せません。</numerusform>
        </translation>
    </message>
    <message>
        <source>Delete this conversation?</source>
        <translation>この会話を削除しますか？</translation>
    </message>
    <message>
        <source>Write to the companions… (Enter sends)</source>
        <translation>コンパニオンに話しかける…（Enter で送信）</translation>
    </message>
    <message>
        <source>Enter sends; Shift+Enter starts a new line; Esc interrupts</source>
        <translation>Enter で送信、Shift+Enter で改行、Esc で割り込み</translation>
    </message>
    <message>
        <source>stand-in: the model repeated itself</source>
        <translation>代わりの返事（くり返しのため）</translation>
    </message>
    <message>
        <source>stand-in: the model echoed the message</source>
        <translation>代わりの返事（オウム返しのため）</translation>
    </message>
    <message>
        <source>stand-in: the model spoke as someone else</source>
        <translation>代わりの返事（別人として話したため）</translation>
    </message>
    <message>
        <source>stand-in: the model used another language</source>
        <translation>代わりの返事（別の言語だったため）</translation>
    </message>
    <message>
        <source>stand-in: nothing usable came back</source>
        <translation>代わりの返事（使える答えがなかったため）</translation>
    </message>
    <message>
        <source>stand-in: no time to try again</source>
        <translation>代わりの返事（やり直す時間がなかったため）</translation>
    </message>
    <message>
        <source>stand-in: the model wrote its instructions back</source>
        <translation>代わりの返事（モデルが指示文をそのまま書いたため）</translation>
    </message>
    <message>
        <source>stand-in: the model contradicted itself</source>
        <translation>代わりの返事（モデルの返事が矛盾していたため）</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>削除する</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>キャンセル</translation>
    </message>
    <message>
        <source>Could not do it: {error}</source>
        <translation>できませんでした: {error}</translation>
    </message>
    <message>
        <source>The companions can&apos;t reach their language model (connection refused at {host}). Is the model server running?</source>
        <translation>コンパニオンが言語モデルに接続できません（{host} で接続が拒否されました）。モデルのサーバーは動いていますか？</translation>
    </message>
    <message>
        <source>The companions can&apos;t reach their language model: the address {host} is not known. Check the address in the model settings.</source>
        <translation>コンパニオンが言語モデルに接続できません：アドレス {host} が見つかりません。モデルの設定でアドレスを確かめてください。</translation>
    </message>
    <message>
        <source>The companions can&apos;t reach their language model at {host}. Is the model server running, and is its address right?</source>
        <translation>コンパニオンが {host} の言語モデルに接続できません。モデルのサーバーは動いていますか？アドレスは正しいですか？</translation>
    </message>
    <message>
        <source>The companions&apos; language model at {host} stopped in the middle of an answer. Start it again, or choose another model.</source>
        <translation>{host} の言語モデルが応答の途中で止まりました。もう一度起動するか、別のモデルを選んでください。</translation>
    </message>
    <message>
        <source>The companions&apos; language model at {host} did not answer in time. It may be busy or stuck: restart it, or choose a smaller model.</source>
        <translation>{host} の言語モデルが時間内に応答しませんでした。混み合っているか止まっているのかもしれません。再起動するか、小さいモデルを選んでください。</translation>
    </message>
    <message>
        <source>The language model at {host} refused the companions&apos; request. Check the model name and the API key in the model settings.</source>
        <translation>{host} の言語モデルがコンパニオンのリクエストを断りました。モデルの設定でモデル名と API キーを確かめてください。</translation>
    </message>
    <message>
        <source>Something is wrong with the companions&apos; language model at {host}. The model settings may help.</source>
        <translation>{host} の言語モデルに問題があります。モデルの設定を見直すと直るかもしれません。</translation>
    </message>
    <message>
        <source>Madoi checks every few seconds whether it is back.</source>
        <translation>戻ったかどうかを Madoi が数秒ごとに確かめています。</translation>
    </message>
    <message>
        <source>Your message waits in the box and goes by itself as soon as the model answers again.</source>
        <translation>メッセージは入力欄で待っていて、モデルが応答するようになったら自動で送られます。</translation>
    </message>
    <message>
        <source>Model settings…</source>
        <translation>モデルの設定…</translation>
    </message>
    <message>
        <source>Restart the model</source>
        <translation>モデルを再起動</translation>
    </message>
</context>
<context>
    <name>companion_editor</name>
    <message>
        <source>Companions</source>
        <translation>コンパニオン</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>追加</translation>
    </message>
    <message>
        <source>Duplicate</source>
        <translation>複製</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>削除</translation>
    </message>
    <message>
        <source>Restore sample</source>
        <translation>サンプルに戻す</translation>
    </message>
    <message>
        <source>Import…</source>
        <translation>読み込む…</translation>
    </message>
    <message>
        <source>Export…</source>
        <translation>書き出す…</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>閉じる</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名前</translation>
    </message>
    <message>
        <source>Id</source>
        <translation>ID</translation>
    </message>
    <message>
        <source>Words in</source>
        <translation>言葉の言語</translation>
    </message>
    <message>
        <source>Japanese</source>
        <translation>日本語</translation>
    </message>
    <message>
        <source>English</source>
        <translation>英語</translation>
    </message>
    <message>
        <source>Personality</source>
        <translation>性格</translation>
    </message>
    <message>
        <source>Story</source>
        <translation>生い立ち</translation>
    </message>
    <message>
        <source>How it talks (sample lines, one per line)</source>
        <translation>話し方（セリフの例、1 行に 1 つ）</translation>
    </message>
    <message>
        <source>First greeting</source>
        <translation>最初のあいさつ</translation>
    </message>
    <message>
        <source>Said aloud to open a new conversation; no model is asked.</source>
        <translation>新しい会話の始めに声に出して言います（モデルは使いません）。</translation>
    </message>
    <message>
        <source>Said aloud, with no model asked, when you start a new conversation with this companion (the one chosen in To, or the only one here). Empty: it waits for you to speak first.</source>
        <translation>新しい会話を始めたとき、このコンパニオン（宛先で選んだ相手、またはひとりだけいるとき）が、モデルに尋ねずに声に出して言います。空なら、あなたが先に話すのを待ちます。</translation>
    </message>
    <message>
        <source>Colour</source>
        <translation>色</translation>
    </message>
    <message>
        <source>Picture</source>
        <translation>画像</translation>
    </message>
    <message>
        <source>Choose…</source>
        <translation>選ぶ…</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>モデル</translation>
    </message>
    <message>
        <source>Empty: as the card says, else the default model</source>
        <translation>空欄: カードの指定、なければ既定のモデル</translation>
    </message>
    <message>
        <source>Voice</source>
        <translation>声</translation>
    </message>
    <message>
        <source>As the card says</source>
        <translation>カードの指定どおり</translation>
    </message>
    <message>
        <source>Knowledge</source>
        <translation>知識</translation>
    </message>
    <message>
        <source>May search your knowledge folders</source>
        <translation>知識フォルダーを検索してよい</translation>
    </message>
    <message>
        <source>It searches them and recalls what they say; the folders are chosen in Settings &gt; Search.</source>
        <translation>フォルダーを検索し、その内容を思い出します。フォルダーは 設定 &gt; 検索 で選びます。</translation>
    </message>
    <message>
        <source>Events (for those who want them)</source>
        <translation>イベント（使いたい人向け）</translation>
    </message>
    <message>
        <source>Add a condition</source>
        <translation>条件を追加</translation>
    </message>
    <message>
        <source>When (CEL), e.g. need_response == true</source>
        <translation>条件（CEL）、例: need_response == true</translation>
    </message>
    <message>
        <source>Then (an instruction)</source>
        <translation>そのときの指示</translation>
    </message>
    <message>
        <source>valid CEL</source>
        <translation>正しい CEL です</translation>
    </message>
    <message>
        <source>not valid CEL: {error}</source>
        <translation>CEL として正しくありません: {error}</translation>
    </message>
    <message>
        <source>What this card runs, sends and uses</source>
        <translation>このカードが実行・送信・使用するもの</translation>
    </message>
    <message>
        <source>Held until you approve it: it</source>
        <translation>あなたが承認するまで保留中。このカードは:</translation>
    </message>
    <message>
        <source>Approved by you: it</source>
        <translation>あなたが承認済み。このカードは:</translation>
    </message>
    <message>
        <source>A sample shipped with Madoi: it</source>
        <translation>Madoi 同梱のサンプル。このカードは:</translation>
    </message>
    <message>
        <source>Approve</source>
        <translation>承認</translation>
    </message>
    <message>
        <source>Revoke</source>
        <translation>承認を取り消す</translation>
    </message>
    <message>
        <source>Kept from the imported card, not used by Madoi: {fields}</source>
        <translation>読み込んだカードから保持（Madoi では使わない項目）: {fields}</translation>
    </message>
    <message>
        <source>Lorebook: {n} entries ({keys} …)</source>
        <translation>設定資料（ロアブック）: {n} 件（{keys} …）</translation>
    </message>
    <message>
        <source>A companion needs a name.</source>
        <translation>コンパニオンには名前が必要です。</translation>
    </message>
    <message>
        <source>Use letters, digits, &apos;-&apos;, &apos;_&apos; or &apos;.&apos; (at most 64).</source>
        <translation>英字・数字・「-」「_」「.」を使ってください（64 文字まで）。</translation>
    </message>
    <message>
        <source>Another companion has this id.</source>
        <translation>この ID は別のコンパニオンが使っています。</translation>
    </message>
    <message>
        <source>Saved: {name} talks like this from its next turn.</source>
        <translation>保存しました。{name}は次の番からこの内容で話します。</translation>
    </message>
    <message>
        <source>{name} left the conversation; its card was removed.</source>
        <translation>{name}は会話を離れ、カードを削除しました。</translation>
    </message>
    <message>
        <source>{name} is back as shipped.</source>
        <translation>{name}を同梱時の状態に戻しました。</translation>
    </message>
    <message>
        <source>{name} joined from a {format} card.</source>
        <translation>{name}が {format} カードから加わりました。</translation>
    </message>
    <message>
        <source>{file} was not imported: {reason}</source>
        <translation>{file} は読み込めませんでした: {reason}</translation>
    </message>
    <message>
        <source>Written to {file}.</source>
        <translation>{file} に書き出しました。</translation>
    </message>
    <message>
        <source>Not saved: {error}</source>
        <translation>保存できませんでした: {error}</translation>
    </message>
    <message>
        <source>Drop a character card (PNG or JSON) here to import it.</source>
        <translation>キャラクターカード（PNG か JSON）をここにドロップすると読み込めます。</translation>
    </message>
    <message>
        <source>New companion</source>
        <translation>新しいコンパニオン</translation>
    </message>
    <message>
        <source>runs the program: {command} (MCP server {server})</source>
        <translation>プログラムを実行する: {command}（MCP サーバー {server}）</translation>
    </message>
    <message>
        <source>connects to the MCP server {server} at {url}</source>
        <translation>MCP サーバー {server}（{url}）に接続する</translation>
    </message>
    <message>
        <source>sends the conversation to {url}</source>
        <translation>会話を {url} に送る</translation>
    </message>
    <message>
        <source>sends the conversation to {url} with the value of the environment variable ${var} as its key</source>
        <translation>会話を {url} に送り、環境変数 ${var} の値をキーとして渡す</translation>
    </message>
    <message>
        <source>sends the value of the environment variable ${var} as a key to the default model server</source>
        <translation>環境変数 ${var} の値をキーとして既定のモデルサーバーに送る</translation>
    </message>
    <message>
        <source>uses the tool {tool}: looks through your camera</source>
        <translation>ツール {tool} を使う：あなたのカメラを見る</translation>
    </message>
    <message>
        <source>uses the tool {tool}: searches your files and past conversations</source>
        <translation>ツール {tool} を使う：あなたのファイルと過去の会話を検索する</translation>
    </message>
    <message>
        <source>uses the tool {tool}: a plugin of that name</source>
        <translation>ツール {tool} を使う：その名前のプラグイン</translation>
    </message>
    <message>
        <source>{name} (copy)</source>
        <translation>{name}（コピー）</translation>
    </message>
</context>
<context>
    <name>companions_desk</name>
    <message>
        <source>&amp;Companions…</source>
        <translation>コンパニオン(&amp;C)…</translation>
    </message>
    <message>
        <source>A companion card asks for more</source>
        <translation>コンパニオンのカードが許可を求めています</translation>
    </message>
    <message>
        <source>These companions take part already. What their cards would also do waits for you: approve only what you trust.</source>
        <translation>これらのコンパニオンはすでに会話に参加しています。カードが求める次の動作は、あなたの承認を待っています。信頼できるものだけを承認してください。</translation>
    </message>
    <message>
        <source>{name} ({file}) would:</source>
        <translation>{name}（{file}）は次のことをします:</translation>
    </message>
    <message>
        <source>{name}&apos;s card changed since you approved it; it would:</source>
        <translation>{name}のカードは承認後に変更されました。次のことをします:</translation>
    </message>
    <message>
        <source>Approve</source>
        <translation>承認</translation>
    </message>
    <message>
        <source>Not now</source>
        <translation>今はしない</translation>
    </message>
</context>
<context>
    <name>consent</name>
    <message>
        <source>{who} {where} wants to look through your camera.</source>
        <translation>{who}（{where}）があなたのカメラを見ようとしています。</translation>
    </message>
    <message>
        <source>{who} {where} wants to speak through your speakers.</source>
        <translation>{who}（{where}）があなたのスピーカーで話そうとしています。</translation>
    </message>
    <message>
        <source>{who} {where} wants to search your files.</source>
        <translation>{who}（{where}）があなたのファイルを検索しようとしています。</translation>
    </message>
    <message>
        <source>{who} {where} wants to search your past conversations.</source>
        <translation>{who}（{where}）があなたの過去の会話を検索しようとしています。</translation>
    </message>
    <message>
        <source>{who} {where} wants to use a tool of an MCP server or plugin ({tool}).</source>
        <translation>{who}（{where}）が MCP サーバーまたはプラグインのツール（{tool}）を使おうとしています。</translation>
    </message>
    <message>
        <source>on {peer}</source>
        <translation>{peer} 上</translation>
    </message>
    <message>
        <source>through the bridge</source>
        <translation>ブリッジ経由</translation>
    </message>
    <message>
        <source>from outside this window</source>
        <translation>このウィンドウの外から</translation>
    </message>
    <message>
        <source>An imported conversation</source>
        <translation>取り込んだ会話</translation>
    </message>
    <message>
        <source>in a companion&apos;s prompt</source>
        <translation>コンパニオンのプロンプト内</translation>
    </message>
    <message>
        <source>Allow once</source>
        <translation>今回だけ許可</translation>
    </message>
    <message>
        <source>Always</source>
        <translation>常に許可</translation>
    </message>
    <message>
        <source>Never</source>
        <translation>許可しない</translation>
    </message>
    <message>
        <source>Allow this time only; ask again next time</source>
        <translation>今回だけ許可します。次回はまた確認します</translation>
    </message>
    <message>
        <source>Allow from now on (Settings, Privacy tab: forget it)</source>
        <translation>今後は常に許可します（設定の「プライバシー」タブで取り消せます）</translation>
    </message>
    <message>
        <source>Refuse from now on (Settings, Privacy tab: forget it)</source>
        <translation>今後は常に断ります（設定の「プライバシー」タブで取り消せます）</translation>
    </message>
    <message>
        <source>{n} more question(s) waiting</source>
        <translation>ほかに {n} 件の確認が待っています</translation>
    </message>
    <message>
        <source>Not allowed</source>
        <translation>許可されていません</translation>
    </message>
    <message>
        <source>{who} {where} may not look through your camera.</source>
        <translation>{who}（{where}）はあなたのカメラを見られません。</translation>
    </message>
    <message>
        <source>{who} {where} may not speak through your speakers.</source>
        <translation>{who}（{where}）はあなたのスピーカーで話せません。</translation>
    </message>
    <message>
        <source>{who} {where} may not search your files.</source>
        <translation>{who}（{where}）はあなたのファイルを検索できません。</translation>
    </message>
    <message>
        <source>{who} {where} may not search your past conversations.</source>
        <translation>{who}（{where}）はあなたの過去の会話を検索できません。</translation>
    </message>
    <message>
        <source>{who} {where} may not use tools of MCP servers and plugins.</source>
        <translation>{who}（{where}）は MCP サーバーやプラグインのツールを使えません。</translation>
    </message>
    <message>
        <source>Look through the camera</source>
        <translation>カメラで見る</translation>
    </message>
    <message>
        <source>Speak through the speakers</source>
        <translation>スピーカーで話す</translation>
    </message>
    <message>
        <source>Search your files</source>
        <translation>ファイルを検索する</translation>
    </message>
    <message>
        <source>Search past conversations</source>
        <translation>過去の会話を検索する</translation>
    </message>
    <message>
        <source>Tools of MCP servers and plugins</source>
        <translation>MCP サーバーとプラグインのツール</translation>
    </message>
    <message>
        <source>{companion} wants to look through your camera, and what it was told holds words from {who} {where}.</source>
        <translation>{companion}があなたのカメラを見ようとしています。{companion}が聞いた中に、{who}（{where}）の言葉があります。</translation>
    </message>
    <message>
        <source>{companion} wants to speak through your speakers, and what it was told holds words from {who} {where}.</source>
        <translation>{companion}があなたのスピーカーで話そうとしています。{companion}が聞いた中に、{who}（{where}）の言葉があります。</translation>
    </message>
    <message>
        <source>{companion} wants to search your files, and what it was told holds words from {who} {where}.</source>
        <translation>{companion}があなたのファイルを検索しようとしています。{companion}が聞いた中に、{who}（{where}）の言葉があります。</translation>
    </message>
    <message>
        <source>{companion} wants to search your past conversations, and what it was told holds words from {who} {where}.</source>
        <translation>{companion}があなたの過去の会話を検索しようとしています。{companion}が聞いた中に、{who}（{where}）の言葉があります。</translation>
    </message>
    <message>
        <source>{companion} wants to use a tool of an MCP server or plugin ({tool}), and what it was told holds words from {who} {where}.</source>
        <translation>{companion}が MCP サーバーかプラグインのツール（{tool}）を使おうとしています。{companion}が聞いた中に、{who}（{where}）の言葉があります。</translation>
    </message>
    <message>
        <source>in your knowledge folders</source>
        <translation>ナレッジフォルダ内</translation>
    </message>
    <message>
        <source>(a tool&apos;s result)</source>
        <translation>ツールの結果</translation>
    </message>
    <message>
        <source>your documents</source>
        <translation>あなたの文書</translation>
    </message>
    <message>
        <source>{companion}&apos;s line holds what your camera saw. Send it to {who} {where}? If not, it stays in this window.</source>
        <translation>{companion}の発言には、カメラで見たことが入っています。{who}（{where}）に送りますか？送らなければ、この画面の中だけに残ります。</translation>
    </message>
    <message>
        <source>{companion}&apos;s line holds words of your files. Send it to {who} {where}? If not, it stays in this window.</source>
        <translation>{companion}の発言には、あなたのファイルの言葉が入っています。{who}（{where}）に送りますか？送らなければ、この画面の中だけに残ります。</translation>
    </message>
    <message>
        <source>{companion}&apos;s line holds your past conversations. Send it to {who} {where}? If not, it stays in this window.</source>
        <translation>{companion}の発言には、あなたの過去の会話が入っています。{who}（{where}）に送りますか？送らなければ、この画面の中だけに残ります。</translation>
    </message>
    <message>
        <source>the computer</source>
        <translation>そのコンピューター</translation>
    </message>
    <message>
        <source>A line that holds what your camera saw stayed in this window: {who} {where} got a notice instead.</source>
        <translation>カメラで見たことが入った発言は、この画面の中に残しました。{who}（{where}）には代わりにお知らせだけが届きました。</translation>
    </message>
    <message>
        <source>A line that holds words of your files stayed in this window: {who} {where} got a notice instead.</source>
        <translation>あなたのファイルの言葉が入った発言は、この画面の中に残しました。{who}（{where}）には代わりにお知らせだけが届きました。</translation>
    </message>
    <message>
        <source>A line that holds your past conversations stayed in this window: {who} {where} got a notice instead.</source>
        <translation>あなたの過去の会話が入った発言は、この画面の中に残しました。{who}（{where}）には代わりにお知らせだけが届きました。</translation>
    </message>
    <message>
        <source>Get lines that hold what the camera saw</source>
        <translation>カメラで見たことが入った発言を受け取る</translation>
    </message>
    <message>
        <source>Get lines that hold words of your files</source>
        <translation>ファイルの言葉が入った発言を受け取る</translation>
    </message>
    <message>
        <source>Get lines that hold your past conversations</source>
        <translation>過去の会話が入った発言を受け取る</translation>
    </message>
</context>
<context>
    <name>desktop_extras</name>
    <message>
        <source>&amp;Madoi</source>
        <translation>円居(&amp;M)</translation>
    </message>
    <message>
        <source>&amp;Settings…</source>
        <translation>設定(&amp;S)…</translation>
    </message>
    <message>
        <source>Settings saved</source>
        <translation>設定を保存しました</translation>
    </message>
    <message>
        <source>In effect now (turning speech on or off takes a restart).</source>
        <translation>すぐに反映されます（音声のオン・オフは再起動後に反映されます）。</translation>
    </message>
    <message>
        <source>The companions have a language model now: press Enter to send.</source>
        <translation>コンパニオンに言語モデルがつながりました。Enter で送信できます。</translation>
    </message>
    <message>
        <source>Settings not saved</source>
        <translation>設定を保存できませんでした</translation>
    </message>
    <message>
        <source>{reason}. Your choice holds until Madoi closes.</source>
        <translation>{reason}。選んだ内容は Madoi を閉じるまで有効です。</translation>
    </message>
</context>
<context>
    <name>filler_notice</name>
    <message>
        <source>The model often gives no usable answer</source>
        <translation>モデルの答えがよく使えません</translation>
    </message>
    <message>
        <source>{fillers} of the companions&apos; last {lines} lines were short stand-ins: the language model repeated itself, answered in another language or gave nothing usable. A larger model usually talks much better (for example qwen2.5:3b or larger with Ollama).</source>
        <translation>コンパニオンの最近の {lines} 回のせりふのうち {fillers} 回が、代わりの短いひとことでした。言語モデルが同じことを繰り返したり、別の言語で答えたり、使える答えを返さなかったためです。もっと大きなモデルにすると、ずっと上手に話せます（たとえば Ollama の qwen2.5:3b 以上）。</translation>
    </message>
    <message>
        <source>Open the model settings…</source>
        <translation>モデルの設定を開く…</translation>
    </message>
</context>
<context>
    <name>first_run</name>
    <message>
        <source>Let&apos;s connect a language model</source>
        <translation>言語モデルをつなぎましょう</translation>
    </message>
    <message>
        <source>A camera was found ({source}); it is opened only when someone looks.</source>
        <translation>カメラが見つかりました（{source}）。誰かが見るときだけ開きます。</translation>
    </message>
    <message>
        <source>A camera was found ({source}); it stays open while the companions notice you (the camera switch in the status bar turns it off).</source>
        <translation>カメラが見つかりました（{source}）。コンパニオンが見守っている間は開いたままです（ステータスバーのカメラのスイッチでオフにできます）。</translation>
    </message>
    <message>
        <source>device {index}</source>
        <translation>デバイス {index}</translation>
    </message>
    <message>
        <source>A local server — free, private, no key</source>
        <translation>ローカルサーバー — 無料・プライベート・キー不要</translation>
    </message>
    <message>
        <source>An API key from an OpenAI-compatible service</source>
        <translation>OpenAI 互換サービスの API キー</translation>
    </message>
    <message>
        <source>The companions need a language model to think and talk. Choose one of these and enter it in the settings:</source>
        <translation>コンパニオンが考えて話すには言語モデルが必要です。次のどちらかを選んで、設定に入力してください:</translation>
    </message>
    <message>
        <source>Their voices work on this machine.</source>
        <translation>このパソコンでは声が出せます。</translation>
    </message>
    <message>
        <source>Speech is off on this machine ({reason}): lines are shown only.</source>
        <translation>このパソコンでは音声が出せません（{reason}）。せりふは画面に表示されるだけです。</translation>
    </message>
    <message>
        <source>No camera ({reason}).</source>
        <translation>カメラはありません（{reason}）。</translation>
    </message>
    <message>
        <source>Search works.</source>
        <translation>検索は使えます。</translation>
    </message>
    <message>
        <source>Search is not available (the start-up problems say why).</source>
        <translation>検索は使えません（理由は起動時の問題の通知にあります）。</translation>
    </message>
    <message>
        <source>&lt;b&gt;Ollama&lt;/b&gt;: install it, run &lt;code&gt;ollama pull qwen2.5:3b&lt;/code&gt;; endpoint:&lt;br&gt;&lt;code&gt;http://127.0.0.1:11434/v1&lt;/code&gt;&lt;br&gt;&lt;b&gt;LM Studio&lt;/b&gt;: load a model and start the local server; endpoint:&lt;br&gt;&lt;code&gt;http://127.0.0.1:1234/v1&lt;/code&gt;&lt;br&gt;&lt;b&gt;llama.cpp&lt;/b&gt;: run &lt;code&gt;llama-server -m model.gguf&lt;/code&gt;; endpoint:&lt;br&gt;&lt;code&gt;http://127.0.0.1:8080/v1&lt;/code&gt;</source>
        <translation>&lt;b&gt;Ollama&lt;/b&gt;: インストールして &lt;code&gt;ollama pull qwen2.5:3b&lt;/code&gt; を実行。エンドポイント:&lt;br&gt;&lt;code&gt;http://127.0.0.1:11434/v1&lt;/code&gt;&lt;br&gt;&lt;b&gt;LM Studio&lt;/b&gt;: モデルを読み込んでローカルサーバーを開始。エンドポイント:&lt;br&gt;&lt;code&gt;http://127.0.0.1:1234/v1&lt;/code&gt;&lt;br&gt;&lt;b&gt;llama.cpp&lt;/b&gt;: &lt;code&gt;llama-server -m model.gguf&lt;/code&gt; を実行。エンドポイント:&lt;br&gt;&lt;code&gt;http://127.0.0.1:8080/v1&lt;/code&gt;</translation>
    </message>
    <message>
        <source>Enter the service&apos;s endpoint and your key; OpenAI&apos;s endpoint is&lt;br&gt;&lt;code&gt;https://api.openai.com/v1&lt;/code&gt;&lt;br&gt;</source>
        <translation>サービスのエンドポイントとキーを入力します。OpenAI のエンドポイントは&lt;br&gt;&lt;code&gt;https://api.openai.com/v1&lt;/code&gt;&lt;br&gt;</translation>
    </message>
    <message>
        <source>The key is stored in the system keyring, never in the settings file.</source>
        <translation>キーはシステムのキーリングに保存され、設定ファイルには書かれません。</translation>
    </message>
    <message>
        <source>This machine has no system keyring: the key is kept in a file only you can read, never in the settings file.</source>
        <translation>このパソコンにはシステムのキーリングがありません。キーはあなただけが読めるファイルに保存され、設定ファイルには書かれません。</translation>
    </message>
    <message>
        <source>This machine has no system keyring and the key file cannot be written: the key is kept for this session only.</source>
        <translation>このパソコンにはシステムのキーリングがなく、キーのファイルも書き込めません。キーはこのセッションの間だけ保持されます。</translation>
    </message>
    <message>
        <source>Open settings…</source>
        <translation>設定を開く…</translation>
    </message>
    <message>
        <source>Check again</source>
        <translation>もう一度確認</translation>
    </message>
    <message>
        <source>Last attempt: {problem}</source>
        <translation>前回の接続: {problem}</translation>
    </message>
    <message>
        <source>No model server answered on this machine (Ollama, LM Studio, llama.cpp at the addresses above). Start one, or enter an endpoint in the settings.</source>
        <translation>このパソコンではモデルサーバーが見つかりませんでした（上の Ollama・LM Studio・llama.cpp のアドレス）。どれかを起動するか、設定にエンドポイントを入力してください。</translation>
    </message>
    <message>
        <source>Let them speak first when you have been quiet for {minutes} minutes (Settings › General changes how long)</source>
        <translation>{minutes}分黙っていたら、みんなから話しかけてもらう（時間は 設定 › 一般 で変えられます）</translation>
    </message>
</context>
<context>
    <name>kokoro_voice</name>
    <message>
        <source>Neural voice (Kokoro)</source>
        <translation>ニューラル音声（Kokoro）</translation>
    </message>
    <message>
        <source>Kokoro-82M: natural Japanese voices that run on this computer. A {size} MB download from the kokoro-onnx project&apos;s release; licence {licence} (the model and its voices, by hexgrad), {export} (the ONNX export).</source>
        <translation>Kokoro-82M：このコンピューターで動く自然な日本語の声です。kokoro-onnx プロジェクトのリリースから {size} MB をダウンロードします。ライセンスは {licence}（モデルと声、hexgrad）と {export}（ONNX への変換）です。</translation>
    </message>
    <message>
        <source>Not downloaded. Until it is, a companion given a Kokoro voice speaks in the default voice (Open JTalk for Japanese).</source>
        <translation>まだダウンロードしていません。それまでは、Kokoro の声を選んだコンパニオンも標準の声（日本語は Open JTalk）で話します。</translation>
    </message>
    <message>
        <source>Download Kokoro ({size} MB)</source>
        <translation>Kokoro をダウンロード（{size} MB）</translation>
    </message>
    <message>
        <source>Asking the host about the files…</source>
        <translation>配布元にファイルを問い合わせています…</translation>
    </message>
    <message>
        <source>Downloading: {done} of {total} MB</source>
        <translation>ダウンロード中: {total} MB のうち {done} MB</translation>
    </message>
    <message>
        <source>Cancel download</source>
        <translation>ダウンロードを中止</translation>
    </message>
    <message>
        <source>Cancelled. The download continues from there next time.</source>
        <translation>中止しました。次回は続きからダウンロードします。</translation>
    </message>
    <message>
        <source>Not downloaded: {problem}</source>
        <translation>ダウンロードできませんでした: {problem}</translation>
    </message>
    <message>
        <source>Downloaded: {count} Japanese voices. Choose one for each companion in the Companions tab (English lines stay with the system voice).</source>
        <translation>ダウンロードしました: 日本語の声 {count} 種類。コンパニオンごとの声は「コンパニオン」タブで選べます（英語の発言はシステムの声のままです）。</translation>
    </message>
    <message>
        <source>Test</source>
        <translation>試す</translation>
    </message>
    <message>
        <source>The test needs Madoi running.</source>
        <translation>試すには Madoi が起動している必要があります。</translation>
    </message>
</context>
<context>
    <name>main_window</name>
    <message>
        <source>Madoi — 円居</source>
        <translation>円居 — Madoi</translation>
    </message>
    <message>
        <source>&amp;Turns</source>
        <translation>発言の順番(&amp;T)</translation>
    </message>
    <message>
        <source>Searc&amp;h</source>
        <translation>検索(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;Camera</source>
        <translation>カメラ(&amp;C)</translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>起動中…</translation>
    </message>
    <message>
        <source>Ready</source>
        <translation>準備ができました</translation>
    </message>
    <message>
        <source>The companions can talk</source>
        <translation>コンパニオンが話せるようになりました</translation>
    </message>
    <message>
        <source>Could not apply the settings</source>
        <translation>設定を反映できませんでした</translation>
    </message>
    <message>
        <source>Still no language model</source>
        <translation>言語モデルはまだ見つかりません</translation>
    </message>
    <message numerus="yes">
        <source>Madoi started with %n problems</source>
        <translation>
            <numerusform>円居は %n 件の問題を抱えて起動しました</numerusform>
        </translation>
    </message>
    <message>
        <source> (and {n} more: see the details)</source>
        <translation>（ほか {n} 件は詳細を参照）</translation>
    </message>
    <message>
        <source>They talk with {model}, run on this computer.</source>
        <translation>この PC で動く {model} で話します。</translation>
    </message>
    <message>
        <source>They talk with {model} at {host}.</source>
        <translation>{host} の {model} で話します。</translation>
    </message>
    <message>
        <source>Other programs can&apos;t connect to Madoi right now: port {port} is in use (perhaps Madoi is already open). You can choose another port in Settings &gt; Bridge.</source>
        <translation>いまはほかのプログラムから円居につなげません。ポート {port} が使われています（円居がもう開いているのかもしれません）。設定の「ブリッジ」で別のポートを選べます。</translation>
    </message>
</context>
<context>
    <name>memory_view</name>
    <message>
        <source>&amp;Memory…</source>
        <translation>記憶(&amp;M)…</translation>
    </message>
    <message>
        <source>What the companions remember</source>
        <translation>コンパニオンが覚えていること</translation>
    </message>
    <message>
        <source>&amp;Companion:</source>
        <translation>コンパニオン(&amp;C):</translation>
    </message>
    <message>
        <source>&amp;Remember earlier conversations (recall them in new ones)</source>
        <translation>以前の会話を覚えておく（新しい会話で思い出す）(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Search:</source>
        <translation>検索(&amp;S):</translation>
    </message>
    <message>
        <source>words in what was said</source>
        <translation>話した内容の言葉</translation>
    </message>
    <message>
        <source>{name} remembers {count} lines.</source>
        <translation>{name}は {count} 行を覚えています。</translation>
    </message>
    <message>
        <source>{name} remembers {count} lines; the newest {shown} are listed.</source>
        <translation>{name}は {count} 行を覚えています。新しい {shown} 行を表示しています。</translation>
    </message>
    <message>
        <source>{found} of the {count} lines {name} remembers hold these words.</source>
        <translation>{name}が覚えている {count} 行のうち {found} 行にこの言葉があります。</translation>
    </message>
    <message>
        <source>{name} remembers nothing yet.</source>
        <translation>{name}はまだ何も覚えていません。</translation>
    </message>
    <message>
        <source>Off: {name} recalls nothing from earlier conversations (what it remembers stays until you forget it).</source>
        <translation>オフ: {name}は以前の会話を思い出しません（覚えていることは、忘れさせるまで残ります）。</translation>
    </message>
    <message>
        <source>{date} · {speaker}: {text}</source>
        <translation>{date} · {speaker}: {text}</translation>
    </message>
    <message>
        <source>{date} · note: {text}</source>
        <translation>{date} · メモ: {text}</translation>
    </message>
    <message>
        <source>{month}/{day}/{year} {hour}:{minute}</source>
        <translation>{year}/{month}/{day} {hour}:{minute}</translation>
    </message>
    <message>
        <source>&amp;Forget selected</source>
        <translation>選んだ行を忘れる(&amp;F)</translation>
    </message>
    <message>
        <source>Forget &amp;everything…</source>
        <translation>すべて忘れる(&amp;E)…</translation>
    </message>
    <message>
        <source>Forget everything?</source>
        <translation>すべて忘れますか？</translation>
    </message>
    <message>
        <source>{name} will forget all {count} lines it remembers, for good. Your conversations stay in the list.</source>
        <translation>{name}は覚えている {count} 行をすべて忘れます。元に戻せません。会話そのものは一覧に残ります。</translation>
    </message>
    <message>
        <source>{name} forgot {count} lines.</source>
        <translation>{name}は {count} 行を忘れました。</translation>
    </message>
    <message>
        <source>Memory could not be read or changed: {error}</source>
        <translation>記憶を読み込めないか、変更できませんでした: {error}</translation>
    </message>
</context>
<context>
    <name>message_actions</name>
    <message>
        <source>Stop</source>
        <translation>止める</translation>
    </message>
    <message>
        <source>The companions stop speaking and thinking; the conversation ends until you write (Shift+Esc)</source>
        <translation>話すのと考えるのをやめ、あなたが書くまで会話を終えます（Shift+Esc）</translation>
    </message>
    <message>
        <source>Copy this message</source>
        <translation>このメッセージをコピー</translation>
    </message>
    <message>
        <source>Copy the selection</source>
        <translation>選択した部分をコピー</translation>
    </message>
    <message>
        <source>Edit…</source>
        <translation>編集…</translation>
    </message>
    <message>
        <source>Edit the message</source>
        <translation>メッセージを編集</translation>
    </message>
    <message>
        <source>The companions will remember it as written here:</source>
        <translation>コンパニオンはここに書いたとおりに覚えます:</translation>
    </message>
    <message>
        <source>Delete (the companions forget it)</source>
        <translation>削除（コンパニオンも忘れます）</translation>
    </message>
    <message>
        <source>Say it again</source>
        <translation>言い直してもらう</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>キャンセル</translation>
    </message>
</context>
<context>
    <name>microphone_switch</name>
    <message>
        <source>Not understood</source>
        <translation>聞き取れませんでした</translation>
    </message>
    <message>
        <source>Not sure: check, then Enter</source>
        <translation>自信なし：確認して Enter</translation>
    </message>
    <message>
        <source>What you said could not be made out as {language}, the only language the recogniser in use understands, so nothing was written or sent.</source>
        <translation>話された言葉を{language}として聞き取れませんでした（いまの音声認識がわかるのは{language}だけです）。何も入力・送信していません。</translation>
    </message>
    <message>
        <source>To talk in Japanese, download Whisper ({size} MB) in Settings &gt; Voice input.</source>
        <translation>日本語で話すには、設定 &gt; 音声入力 で Whisper（{size} MB）をダウンロードしてください。</translation>
    </message>
    <message>
        <source>To talk in Japanese, choose Whisper (already downloaded) in Settings &gt; Voice input.</source>
        <translation>日本語で話すには、設定 &gt; 音声入力 で Whisper（ダウンロード済み）を選んでください。</translation>
    </message>
    <message>
        <source>The recogniser was not sure of your words, so they were not sent: they wait in the message box. Correct them if needed and press Enter to send them.</source>
        <translation>認識に自信がないため送信していません。言葉はメッセージ欄にあります。必要なら直して Enter で送ってください。</translation>
    </message>
    <message>
        <source>Not understood: nothing was sent</source>
        <translation>聞き取れなかったので送信していません</translation>
    </message>
    <message>
        <source>Download Whisper ({size} MB)…</source>
        <translation>Whisper（{size} MB）をダウンロード…</translation>
    </message>
    <message>
        <source>Choose Whisper…</source>
        <translation>Whisper を選ぶ…</translation>
    </message>
    <message>
        <source>English</source>
        <translation>英語</translation>
    </message>
    <message>
        <source>Japanese</source>
        <translation>日本語</translation>
    </message>
    <message>
        <source>Microphone off</source>
        <translation>マイク オフ</translation>
    </message>
    <message>
        <source>Listening</source>
        <translation>聞いています</translation>
    </message>
    <message>
        <source>Hold {key} to talk</source>
        <translation>{key} を押している間話せます</translation>
    </message>
    <message>
        <source>Hearing you…</source>
        <translation>聞き取り中…</translation>
    </message>
    <message>
        <source>Recognising…</source>
        <translation>認識中…</translation>
    </message>
    <message>
        <source>No microphone</source>
        <translation>マイクなし</translation>
    </message>
    <message>
        <source>headset?</source>
        <translation>ヘッドセット推奨</translation>
    </message>
    <message>
        <source>The companions cannot hear you: the microphone is closed. Click to talk to them.</source>
        <translation>マイクは閉じています。コンパニオンにはあなたの声が聞こえません。クリックすると話しかけられます。</translation>
    </message>
    <message>
        <source>The companions hear you: speak, and what you say is sent when you stop. Speaking while they talk cuts them off. Click to mute the microphone.</source>
        <translation>コンパニオンにあなたの声が聞こえています。話し終えると、話した言葉が送られます。コンパニオンが話している間に話すと、話をさえぎれます。クリックするとマイクを切ります。</translation>
    </message>
    <message>
        <source>Hold {key} (or the microphone button beside Send) while you speak. Click to close the microphone.</source>
        <translation>話す間 {key}（または送信の横のマイクボタン）を押したままにしてください。クリックするとマイクを閉じます。</translation>
    </message>
    <message>
        <source>No microphone could be opened: {reason}. Choose one in Settings &gt; Voice input. Click to stop trying.</source>
        <translation>マイクを開けませんでした：{reason}。設定の「音声入力」で選んでください。クリックすると試すのをやめます。</translation>
    </message>
    <message>
        <source>The microphone hears the companions&apos; voice almost as loudly as yours: with a headset (or quieter speakers) your voice can cut them off reliably.</source>
        <translation>マイクにコンパニオンの声があなたの声と同じくらい大きく入っています。ヘッドセット（またはスピーカーの音量を下げる）なら、声で確実にさえぎれます。</translation>
    </message>
    <message>
        <source>The switch holds for now, but could not be saved: {error}</source>
        <translation>切り替えは今回は有効ですが、保存できませんでした: {error}</translation>
    </message>
</context>
<context>
    <name>model_setup</name>
    <message>
        <source>Talk now, with a model on this computer</source>
        <translation>いますぐ話す — このパソコンのモデルで</translation>
    </message>
    <message>
        <source>Madoi runs the model itself: no server, no account, no key, and nothing leaves this computer.</source>
        <translation>モデルは Madoi が自分で動かします。サーバーもアカウントもキーも要らず、何もこのパソコンの外に出ません。</translation>
    </message>
    <message>
        <source>Looking for models on this computer…</source>
        <translation>このパソコンのモデルを探しています…</translation>
    </message>
    <message>
        <source>Models found on this computer:</source>
        <translation>このパソコンで見つかったモデル：</translation>
    </message>
    <message>
        <source>No model file was found on this computer.</source>
        <translation>このパソコンにはモデルファイルが見つかりませんでした。</translation>
    </message>
    <message>
        <source>{name} · {size} · {source}: {where}</source>
        <translation>{name} · {size} · {source}：{where}</translation>
    </message>
    <message>
        <source>Talk with this model</source>
        <translation>このモデルで話す</translation>
    </message>
    <message>
        <source>Choose a file…</source>
        <translation>ファイルを選ぶ…</translation>
    </message>
    <message>
        <source>Choose a GGUF model</source>
        <translation>GGUF モデルを選ぶ</translation>
    </message>
    <message>
        <source>GGUF models (*.gguf);;All files (*)</source>
        <translation>GGUF モデル (*.gguf);;すべてのファイル (*)</translation>
    </message>
    <message>
        <source>Asking Hugging Face about the recommended model…</source>
        <translation>おすすめのモデルについて Hugging Face に問い合わせています…</translation>
    </message>
    <message>
        <source>Or download the recommended model: &lt;b&gt;{name}&lt;/b&gt;, {size}, licence {licence}; it needs about {memory} of memory while the companions talk. {free} free on this disk.</source>
        <translation>または、おすすめのモデルをダウンロード：&lt;b&gt;{name}&lt;/b&gt;、{size}、ライセンス {licence}。会話中に約 {memory} のメモリを使います。このディスクの空きは {free} です。</translation>
    </message>
    <message>
        <source>{done} of it is already downloaded.</source>
        <translation>そのうち {done} はダウンロード済みです。</translation>
    </message>
    <message>
        <source>The recommended model cannot be downloaded now: {reason}</source>
        <translation>おすすめのモデルはいまダウンロードできません：{reason}</translation>
    </message>
    <message>
        <source>Download ({size})</source>
        <translation>ダウンロード（{size}）</translation>
    </message>
    <message>
        <source>Continue the download ({size} left)</source>
        <translation>ダウンロードを続ける（残り {size}）</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>キャンセル</translation>
    </message>
    <message>
        <source>{done} of {total} · {speed}/s</source>
        <translation>{done} / {total} · 毎秒 {speed}</translation>
    </message>
    <message>
        <source>Download paused: {done} of {total} kept. It continues where it stopped.</source>
        <translation>ダウンロードを一時停止しました：{total} のうち {done} を保存済み。続きから再開できます。</translation>
    </message>
    <message>
        <source>The download stopped: {reason}</source>
        <translation>ダウンロードが止まりました：{reason}</translation>
    </message>
    <message>
        <source>This file cannot be used: {reason}</source>
        <translation>このファイルは使えません：{reason}</translation>
    </message>
    <message>
        <source>Starting {name}… the companions talk as soon as it is loaded.</source>
        <translation>{name} を起動しています… 読み込みが終わればすぐにコンパニオンが話せます。</translation>
    </message>
    <message>
        <source>The choice could not be saved: {reason}</source>
        <translation>選んだモデルを保存できませんでした：{reason}</translation>
    </message>
    <message>
        <source>Loading the model {name}…</source>
        <translation>モデル {name} を読み込んでいます…</translation>
    </message>
    <message>
        <source>The model {name} is ready</source>
        <translation>モデル {name} の準備ができました</translation>
    </message>
    <message>
        <source>The model stopped unexpectedly; starting it again…</source>
        <translation>モデルが予期せず止まりました。もう一度起動しています…</translation>
    </message>
    <message>
        <source>The model stopped unexpectedly and was restarted</source>
        <translation>モデルが予期せず止まったため、再起動しました</translation>
    </message>
    <message>
        <source>The companions go on talking. A reply being written at that moment may be missing.</source>
        <translation>コンパニオンは話し続けられます。そのとき書いていた返事が欠けているかもしれません。</translation>
    </message>
    <message>
        <source>The model could not be started</source>
        <translation>モデルを起動できませんでした</translation>
    </message>
    <message>
        <source>The companions cannot talk until a model runs. Choose another model file, or a server in the settings.</source>
        <translation>モデルが動くまでコンパニオンは話せません。別のモデルファイルか、設定でサーバーを選んでください。</translation>
    </message>
</context>
<context>
    <name>model_status</name>
    <message>
        <source>Language model not answering</source>
        <translation>言語モデルが応答していません</translation>
    </message>
</context>
<context>
    <name>network</name>
    <message>
        <source>Where they run</source>
        <translation>いる場所</translation>
    </message>
    <message>
        <source>this computer</source>
        <translation>このコンピューター</translation>
    </message>
    <message>
        <source>reachable</source>
        <translation>つながっている</translation>
    </message>
    <message>
        <source>unreachable</source>
        <translation>つながらない</translation>
    </message>
    <message>
        <source>Network: {address}</source>
        <translation>ネットワーク: {address}</translation>
    </message>
    <message>
        <source>Network not available ({reason})</source>
        <translation>ネットワーク: 使えません ({reason})</translation>
    </message>
    <message>
        <source>Network: starting</source>
        <translation>ネットワーク: 準備中</translation>
    </message>
    <message>
        <source>{name} — a person on {peer}</source>
        <translation>{name} — {peer} にいる人</translation>
    </message>
</context>
<context>
    <name>query_answerers</name>
    <message>
        <source>Ask connected clients for the camera picture first</source>
        <translation>カメラ画像を先に接続中のクライアントに頼む</translation>
    </message>
    <message>
        <source>Let connected clients speak the lines first</source>
        <translation>発言の読み上げを先に接続中のクライアントに頼む</translation>
    </message>
    <message>
        <source>Camera: connected clients first, the app&apos;s camera if none answers within {s:g} s.</source>
        <translation>カメラ: 接続中のクライアントが先に答えます。{s:g} 秒以内に答えがなければアプリのカメラ。</translation>
    </message>
    <message>
        <source>Voice: connected clients first (the app stays silent on lines they say), the app&apos;s voice if none answers in time.</source>
        <translation>音声: 接続中のクライアントが先に話します（クライアントが話した発言をアプリは読み上げません）。間に合わなければアプリの音声。</translation>
    </message>
    <message>
        <source>Camera: the app&apos;s camera; only clients that announce it (hello) or kyoko&apos;s older client for its companion are asked first.</source>
        <translation>カメラ: アプリのカメラ。hello で名乗ったクライアントと、旧 kyoko クライアント（自分のコンパニオン）だけが先に答えます。</translation>
    </message>
    <message>
        <source>Voice: the app&apos;s voice; only clients that announce it (hello) are asked first, and kyoko&apos;s older client says its companion&apos;s lines itself.</source>
        <translation>音声: アプリの音声。hello で名乗ったクライアントだけが先に話します。旧 kyoko クライアントは自分のコンパニオンの発言を自分で話します。</translation>
    </message>
</context>
<context>
    <name>recalled</name>
    <message>
        <source>Recalled from memory</source>
        <translation>記憶から思い出したこと</translation>
    </message>
    <message>
        <source>Nothing recalled yet: what a companion remembers from earlier conversations appears here, turn by turn.</source>
        <translation>まだ何も思い出していません。コンパニオンが以前の会話から思い出したことが、ターンごとにここに表示されます。</translation>
    </message>
    <message>
        <source>{who} recalled nothing for this message.</source>
        <translation>{who}はこのメッセージについて何も思い出しませんでした。</translation>
    </message>
    <message>
        <source>{who} recalled {count} for this message:</source>
        <translation>{who}はこのメッセージについて {count} 件思い出しました:</translation>
    </message>
    <message>
        <source>    {date} · {speaker}: {text}</source>
        <translation>    {date} · {speaker}: {text}</translation>
    </message>
    <message>
        <source>    {date} · note: {text}</source>
        <translation>    {date} · メモ: {text}</translation>
    </message>
    <message>
        <source>    from {source}: {text}</source>
        <translation>    資料 {source} より: {text}</translation>
    </message>
    <message>
        <source>{month}/{day}/{year}</source>
        <translation>{year}/{month}/{day}</translation>
    </message>
</context>
<context>
    <name>refused_origins</name>
    <message>
        <source>A web page was refused</source>
        <translation>ウェブページの接続を拒否しました</translation>
    </message>
    <message>
        <source>A page from {origin} tried to connect to Madoi. If it is yours, allow it in Settings, Bridge tab, &quot;Web pages allowed&quot;.</source>
        <translation>{origin} のページが Madoi に接続しようとしました。ご自分のページなら、設定の「ブリッジ」タブの「許可するウェブページ」で許可してください。</translation>
    </message>
    <message>
        <source>Allow</source>
        <translation>許可</translation>
    </message>
    <message>
        <source>Web page allowed</source>
        <translation>ウェブページを許可しました</translation>
    </message>
    <message>
        <source>Pages from {origin} may connect now (Settings, Bridge tab, to take it back).</source>
        <translation>{origin} のページが接続できるようになりました（取り消すには設定の「ブリッジ」タブへ）。</translation>
    </message>
    <message>
        <source>Could not allow {origin}: {error}</source>
        <translation>{origin} を許可できませんでした: {error}</translation>
    </message>
    <message>
        <source>More web pages were refused; they are not shown one by one (the log names them).</source>
        <translation>ほかにも拒否したウェブページがあります。一つずつは表示しません（ログに記録されています）。</translation>
    </message>
</context>
<context>
    <name>roster</name>
    <message>
        <source>on {peer}</source>
        <translation>{peer} で</translation>
    </message>
    <message>
        <source>via bridge</source>
        <translation>ブリッジ経由</translation>
    </message>
    <message>
        <source>unreachable</source>
        <translation>つながらない</translation>
    </message>
</context>
<context>
    <name>search</name>
    <message>
        <source>Search</source>
        <translation>検索</translation>
    </message>
    <message>
        <source>Search your documents and past conversations… (Enter searches)</source>
        <translation>資料と過去の会話を検索…（Enter で検索）</translation>
    </message>
    <message>
        <source>Search query</source>
        <translation>検索語</translation>
    </message>
    <message>
        <source>Search the index (Enter in the box does the same)</source>
        <translation>索引を検索します（入力欄で Enter でも同じ）</translation>
    </message>
    <message>
        <source>Research</source>
        <translation>調べる</translation>
    </message>
    <message>
        <source>Let the research agent plan several searches and write an answer with citations</source>
        <translation>リサーチエージェントが複数の検索を計画して、出典つきの答えを書きます</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>中止</translation>
    </message>
    <message>
        <source>Stop the search or research in progress</source>
        <translation>実行中の検索・調査を止めます</translation>
    </message>
    <message>
        <source>Update index</source>
        <translation>索引を更新</translation>
    </message>
    <message>
        <source>Index new and changed files of the knowledge folders now</source>
        <translation>資料フォルダーの新しいファイルと変更されたファイルを今すぐ索引に入れます</translation>
    </message>
    <message>
        <source>Search is not available.</source>
        <translation>検索は利用できません。</translation>
    </message>
    <message>
        <source>Search is not available: {reason}</source>
        <translation>検索は利用できません: {reason}</translation>
    </message>
    <message>
        <source>Type a question first.</source>
        <translation>先に質問を入力してください。</translation>
    </message>
    <message>
        <source>Searching “{query}”…</source>
        <translation>「{query}」を検索中…</translation>
    </message>
    <message>
        <source>No hits for “{query}”.</source>
        <translation>「{query}」に一致するものはありませんでした。</translation>
    </message>
    <message>
        <source>The index is empty: nothing to search yet. Add knowledge folders in the settings.</source>
        <translation>索引が空です。まだ検索できるものがありません。設定で資料フォルダーを追加してください。</translation>
    </message>
    <message>
        <source> (indexing is still running: more may be found soon)</source>
        <translation>（索引の作成中です。後でもっと見つかるかもしれません）</translation>
    </message>
    <message>
        <source>Search failed: {error}</source>
        <translation>検索に失敗しました: {error}</translation>
    </message>
    <message>
        <source>Cancelled.</source>
        <translation>中止しました。</translation>
    </message>
    <message>
        <source>Search has stopped.</source>
        <translation>検索は停止しました。</translation>
    </message>
    <message>
        <source>Indexing %v / %m</source>
        <translation>索引を作成中 %v / %m</translation>
    </message>
    <message>
        <source>Indexing…</source>
        <translation>索引を作成中…</translation>
    </message>
    <message>
        <source>Indexing {file}</source>
        <translation>索引に追加中: {file}</translation>
    </message>
    <message numerus="yes">
        <source>%n hits for “{query}” in {ms} ms</source>
        <translation>
            <numerusform>「{query}」: %n 件（{ms} ms）</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n documents indexed</source>
        <translation>
            <numerusform>%n 件の文書を索引済み</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n documents indexed ({changed} new or changed)</source>
        <translation>
            <numerusform>%n 件の文書を索引済み（新規・変更 {changed} 件）</numerusform>
        </translation>
    </message>
    <message>
        <source>The index is empty.</source>
        <translation>索引は空です。</translation>
    </message>
    <message>
        <source>Indexing problems: {problems}</source>
        <translation>索引作成の問題: {problems}</translation>
    </message>
    <message>
        <source>Could not update the index: {error}</source>
        <translation>索引を更新できませんでした: {error}</translation>
    </message>
    <message>
        <source>Query</source>
        <translation>質問の分類</translation>
    </message>
    <message>
        <source>Search to see how the question is understood.</source>
        <translation>検索すると、質問がどう解釈されたかがここに出ます。</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>種類</translation>
    </message>
    <message>
        <source>Confidence</source>
        <translation>確信度</translation>
    </message>
    <message>
        <source>Entities</source>
        <translation>エンティティ</translation>
    </message>
    <message>
        <source>Keywords</source>
        <translation>キーワード</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>重み</translation>
    </message>
    <message>
        <source>Intent</source>
        <translation>意図</translation>
    </message>
    <message>
        <source>local — a specific fact</source>
        <translation>ローカル — 特定の情報</translation>
    </message>
    <message>
        <source>global — the overall picture</source>
        <translation>グローバル — 全体像</translation>
    </message>
    <message>
        <source>relationship — how things relate</source>
        <translation>関係 — 物事の関係</translation>
    </message>
    <message>
        <source>hybrid — overall and related</source>
        <translation>ハイブリッド — 全体と関係</translation>
    </message>
    <message>
        <source>classified by rules</source>
        <translation>ルールで分類</translation>
    </message>
    <message>
        <source>classified by the language model</source>
        <translation>言語モデルで分類</translation>
    </message>
    <message>
        <source>classified by rules (the language model failed: {reason})</source>
        <translation>ルールで分類（言語モデルが失敗: {reason}）</translation>
    </message>
    <message>
        <source>{intent} ({by})</source>
        <translation>{intent}（{by}）</translation>
    </message>
    <message>
        <source>A question about a specific piece of information</source>
        <translation>特定の情報についての質問</translation>
    </message>
    <message>
        <source>A question about the overall picture or trends</source>
        <translation>全体的な概要や傾向についての質問</translation>
    </message>
    <message>
        <source>A question about how entities relate or compare</source>
        <translation>エンティティ間の関係についての質問</translation>
    </message>
    <message>
        <source>A composite question about overall trends and the relations behind them</source>
        <translation>全体の傾向と特定のエンティティ間の関係の両方に関わる複合的な質問</translation>
    </message>
    <message>
        <source>—</source>
        <translation>—</translation>
    </message>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
    <message>
        <source>“{text}”</source>
        <translation>「{text}」</translation>
    </message>
    <message>
        <source>Fused</source>
        <translation>統合</translation>
    </message>
    <message>
        <source>Keyword</source>
        <translation>キーワード</translation>
    </message>
    <message>
        <source>Semantic</source>
        <translation>意味</translation>
    </message>
    <message>
        <source>Graph</source>
        <translation>グラフ</translation>
    </message>
    <message>
        <source>{name} ({n})</source>
        <translation>{name} ({n})</translation>
    </message>
    <message>
        <source>Search results</source>
        <translation>検索結果</translation>
    </message>
    <message>
        <source>{rank}. {source} · {score}</source>
        <translation>{rank}. {source} · {score}</translation>
    </message>
    <message>
        <source>score {score}</source>
        <translation>スコア {score}</translation>
    </message>
    <message>
        <source>{score}</source>
        <translation>{score}</translation>
    </message>
    <message>
        <source>keyword {keyword} · semantic {semantic} · graph {graph}</source>
        <translation>キーワード {keyword} · 意味 {semantic} · グラフ {graph}</translation>
    </message>
    <message>
        <source>This channel found nothing.</source>
        <translation>このチャンネルでは見つかりませんでした。</translation>
    </message>
    <message>
        <source>This channel is off: the embedding model is not installed.</source>
        <translation>このチャンネルは無効です（埋め込みモデルが入っていません）。</translation>
    </message>
    <message>
        <source>Research answers a question from several searches, with citations.</source>
        <translation>「調べる」は複数の検索から出典つきで質問に答えます。</translation>
    </message>
    <message>
        <source>Starting the research…</source>
        <translation>調査を始めています…</translation>
    </message>
    <message>
        <source>Planning the searches…</source>
        <translation>検索を計画中…</translation>
    </message>
    <message>
        <source>Searching (round {round}): {queries}</source>
        <translation>検索中（{round} 回目）: {queries}</translation>
    </message>
    <message>
        <source>Checking what is still missing (round {round})…</source>
        <translation>足りない情報を確認中（{round} 回目）…</translation>
    </message>
    <message>
        <source>Writing the answer from {detail}…</source>
        <translation>{detail} から答えを書いています…</translation>
    </message>
    <message>
        <source>Done: {citations} from {searches}.</source>
        <translation>完了: {searches}から{citations}。</translation>
    </message>
    <message numerus="yes">
        <source>%n citations</source>
        <translation>
            <numerusform>引用 %n 件</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n searches</source>
        <translation>
            <numerusform>%n 回の検索</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n sources</source>
        <translation>
            <numerusform>%n 件の資料</numerusform>
        </translation>
    </message>
    <message>
        <source>Research cancelled.</source>
        <translation>調査を中止しました。</translation>
    </message>
    <message>
        <source>Research failed: {error}</source>
        <translation>調査に失敗しました: {error}</translation>
    </message>
    <message>
        <source>Research answer</source>
        <translation>調査の答え</translation>
    </message>
    <message>
        <source>Extractive answer: no language model is configured, so these are the best sentences of the sources.</source>
        <translation>抜粋による答え: 言語モデルが設定されていないため、資料から最適な文を選んでいます。</translation>
    </message>
    <message>
        <source>Extractive answer: the language model did not write one ({reason}), so these are the best sentences of the sources.</source>
        <translation>抜粋による答え: 言語モデルが答えを書けなかったため（{reason}）、資料から最適な文を選んでいます。</translation>
    </message>
    <message>
        <source>Answer written by the language model from the sources.</source>
        <translation>資料をもとに言語モデルが書いた答えです。</translation>
    </message>
    <message>
        <source>Citations</source>
        <translation>出典</translation>
    </message>
    <message>
        <source>[{n}] {source}</source>
        <translation>[{n}] {source}</translation>
    </message>
    <message>
        <source>conversation {id}</source>
        <translation>会話 {id}</translation>
    </message>
</context>
<context>
    <name>search.names</name>
    <message>
        <source>Conversation {id}</source>
        <translation>会話 {id}</translation>
    </message>
</context>
<context>
    <name>search.title</name>
    <message>
        <source>Research</source>
        <translation>調査</translation>
    </message>
</context>
<context>
    <name>settings</name>
    <message>
        <source>Madoi settings</source>
        <translation>円居の設定</translation>
    </message>
    <message>
        <source>General</source>
        <translation>全般</translation>
    </message>
    <message>
        <source>Language model</source>
        <translation>言語モデル</translation>
    </message>
    <message>
        <source>Camera and voice</source>
        <translation>カメラと音声</translation>
    </message>
    <message>
        <source>Bridge</source>
        <translation>ブリッジ</translation>
    </message>
    <message>
        <source>Companions</source>
        <translation>コンパニオン</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>検索</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>言語</translation>
    </message>
    <message>
        <source>Theme</source>
        <translation>テーマ</translation>
    </message>
    <message>
        <source>Your name</source>
        <translation>あなたの名前</translation>
    </message>
    <message>
        <source>Follow the system</source>
        <translation>システムに合わせる</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>ライト</translation>
    </message>
    <message>
        <source>Dark</source>
        <translation>ダーク</translation>
    </message>
    <message>
        <source>Endpoint URL</source>
        <translation>エンドポイント URL</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API キー</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>モデル</translation>
    </message>
    <message>
        <source>Test connection</source>
        <translation>接続テスト</translation>
    </message>
    <message>
        <source>e.g. http://127.0.0.1:11434/v1 (Ollama) or https://api.openai.com/v1</source>
        <translation>例: http://127.0.0.1:11434/v1 (Ollama) または https://api.openai.com/v1</translation>
    </message>
    <message>
        <source>Empty: the server&apos;s default</source>
        <translation>空欄: サーバーの既定のモデル</translation>
    </message>
    <message>
        <source>Stored in the system keyring, never in the settings file or the logs.</source>
        <translation>システムのキーリングに保存します。設定ファイルやログには書きません。</translation>
    </message>
    <message>
        <source>No system keyring found: the key is kept in {path}, readable only by you (never in the settings file or the logs).</source>
        <translation>システムのキーリングがありません。キーは {path} に保存し、あなただけが読めます（設定ファイルやログには書きません）。</translation>
    </message>
    <message>
        <source>No system keyring, and {path} cannot be written: the key is kept in memory for this session only (set MADOI_LLM_API_KEY to keep it).</source>
        <translation>システムのキーリングがなく、{path} にも書き込めません。キーはこのセッションの間だけメモリに保持します（保存するには MADOI_LLM_API_KEY を設定してください）。</translation>
    </message>
    <message>
        <source>The token is stored in the system keyring, never in the settings file or the logs.</source>
        <translation>トークンはシステムのキーリングに保存します。設定ファイルやログには書きません。</translation>
    </message>
    <message>
        <source>No system keyring found: the token is kept in {path}, readable only by you.</source>
        <translation>システムのキーリングがありません。トークンは {path} に保存し、あなただけが読めます。</translation>
    </message>
    <message>
        <source>No system keyring, and {path} cannot be written: the token is kept in memory for this session only (set MADOI_BRIDGE_TOKEN to keep it).</source>
        <translation>システムのキーリングがなく、{path} にも書き込めません。トークンはこのセッションの間だけメモリに保持します（保存するには MADOI_BRIDGE_TOKEN を設定してください）。</translation>
    </message>
    <message numerus="yes">
        <source>OK: %n models</source>
        <translation>
            <numerusform>接続できました（モデル %n 個）</numerusform>
        </translation>
    </message>
    <message>
        <source>Failed: {error}</source>
        <translation>接続できません: {error}</translation>
    </message>
    <message>
        <source>Testing…</source>
        <translation>テスト中…</translation>
    </message>
    <message>
        <source>Enter an endpoint URL first.</source>
        <translation>先に URL を入力してください。</translation>
    </message>
    <message>
        <source>Camera</source>
        <translation>カメラ</translation>
    </message>
    <message>
        <source>Device number (0, 1 …), a video file, a stream URL, or none</source>
        <translation>デバイス番号 (0, 1 …)、動画ファイル、ストリーム URL、または none</translation>
    </message>
    <message>
        <source>Preview frames per second</source>
        <translation>プレビューのフレームレート</translation>
    </message>
    <message>
        <source>Speak the companions&apos; messages aloud</source>
        <translation>コンパニオンの発言を読み上げる</translation>
    </message>
    <message>
        <source>Speaking rate (words per minute)</source>
        <translation>話す速さ（語/分）</translation>
    </message>
    <message>
        <source>Volume</source>
        <translation>音量</translation>
    </message>
    <message>
        <source>Test voice</source>
        <translation>音声テスト</translation>
    </message>
    <message>
        <source>Hello! This is Madoi.</source>
        <translation>こんにちは、円居です。</translation>
    </message>
    <message>
        <source>Spoken.</source>
        <translation>再生しました。</translation>
    </message>
    <message>
        <source>Voice output is not available.</source>
        <translation>音声出力が使えません。</translation>
    </message>
    <message>
        <source>Not heard: {error}</source>
        <translation>再生できませんでした: {error}</translation>
    </message>
    <message>
        <source>speech is turned off in the settings</source>
        <translation>設定で音声がオフになっています</translation>
    </message>
    <message>
        <source>no sound device or audio player was found</source>
        <translation>音を出すデバイスか再生プログラムが見つかりません</translation>
    </message>
    <message>
        <source>no speech engine (install espeak-ng)</source>
        <translation>音声合成エンジンがありません（espeak-ng を入れてください）</translation>
    </message>
    <message>
        <source>the speaker has not started yet</source>
        <translation>音声出力はまだ起動していません</translation>
    </message>
    <message>
        <source>the test was interrupted</source>
        <translation>テストが中断されました</translation>
    </message>
    <message>
        <source>speech synthesis failed</source>
        <translation>音声合成に失敗しました</translation>
    </message>
    <message>
        <source>Its card</source>
        <translation>カードの内容</translation>
    </message>
    <message>
        <source>Allow this card to do this (asked again if the card changes)</source>
        <translation>このカードに許可する（カードが変わったら再度確認します）</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>キャンセル</translation>
    </message>
    <message>
        <source>Let other programs join over WebSocket</source>
        <translation>他のプログラムを WebSocket で参加させる</translation>
    </message>
    <message>
        <source>Listen on</source>
        <translation>待ち受けアドレス</translation>
    </message>
    <message>
        <source>Port</source>
        <translation>ポート</translation>
    </message>
    <message>
        <source>Access token</source>
        <translation>アクセストークン</translation>
    </message>
    <message>
        <source>Generate</source>
        <translation>生成</translation>
    </message>
    <message>
        <source>Choose a port from 1 to 65535, or turn the bridge off.</source>
        <translation>1〜65535 のポートを選ぶか、ブリッジをオフにしてください。</translation>
    </message>
    <message>
        <source>A token is required when the bridge listens beyond this computer.</source>
        <translation>このコンピューター以外から接続できる場合はトークンが必要です。</translation>
    </message>
    <message>
        <source>Could not save: {error}</source>
        <translation>保存できませんでした: {error}</translation>
    </message>
    <message>
        <source>Each companion&apos;s model and voice. Empty: what its card says.</source>
        <translation>コンパニオンごとのモデルと声。空欄ならカードの設定を使います。</translation>
    </message>
    <message>
        <source>As the card says ({model})</source>
        <translation>カードのとおり（{model}）</translation>
    </message>
    <message>
        <source>the default model</source>
        <translation>既定のモデル</translation>
    </message>
    <message>
        <source>Voice</source>
        <translation>声</translation>
    </message>
    <message>
        <source>As the card says ({voice})</source>
        <translation>カードのとおり（{voice}）</translation>
    </message>
    <message>
        <source>the engine&apos;s choice</source>
        <translation>音声エンジンの既定</translation>
    </message>
    <message>
        <source>{name}, female voice {n}</source>
        <translation>{name}・女声 {n}</translation>
    </message>
    <message>
        <source>{name}, male voice {n}</source>
        <translation>{name}・男声 {n}</translation>
    </message>
    <message>
        <source>Test</source>
        <translation>テスト</translation>
    </message>
    <message>
        <source>Hello, I am {name}. Nice to meet you!</source>
        <translation>こんにちは、{name}です。よろしくね！</translation>
    </message>
    <message>
        <source>{model} answered in {s:.1f} s.</source>
        <translation>{model} が {s:.1f} 秒で答えました。</translation>
    </message>
    <message>
        <source>The server refused the API key.</source>
        <translation>サーバーが API キーを受け付けませんでした。</translation>
    </message>
    <message>
        <source>The server has no model named {model}.</source>
        <translation>サーバーに {model} というモデルはありません。</translation>
    </message>
    <message>
        <source>No model server answers at {url}.</source>
        <translation>{url} でモデルサーバーが応答しません。</translation>
    </message>
    <message>
        <source>{model} did not answer in time.</source>
        <translation>{model} が時間内に答えませんでした。</translation>
    </message>
    <message>
        <source>No language model is set up: choose one in the Language model tab.</source>
        <translation>言語モデルが設定されていません。「言語モデル」タブで選んでください。</translation>
    </message>
    <message>
        <source>{model} did not answer: {error}</source>
        <translation>{model} が答えませんでした: {error}</translation>
    </message>
    <message>
        <source>No companion cards were found.</source>
        <translation>コンパニオンのカードが見つかりません。</translation>
    </message>
    <message>
        <source>Knowledge folders</source>
        <translation>知識フォルダー</translation>
    </message>
    <message>
        <source>The companions and the search panel search the documents in these folders. New folders are indexed as soon as you save.</source>
        <translation>コンパニオンと検索パネルは、これらのフォルダーの文書を検索します。新しいフォルダーは保存するとすぐに索引が作られます。</translation>
    </message>
    <message>
        <source>Add…</source>
        <translation>追加…</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>削除</translation>
    </message>
    <message>
        <source>Choose a knowledge folder</source>
        <translation>知識フォルダーを選ぶ</translation>
    </message>
    <message>
        <source>{folder} does not exist.</source>
        <translation>{folder} がありません。</translation>
    </message>
    <message>
        <source>Speak first after a silence of</source>
        <translation>黙っている時間がこれを超えたら話しかける</translation>
    </message>
    <message>
        <source> minutes</source>
        <translation> 分</translation>
    </message>
    <message>
        <source>never</source>
        <translation>しない</translation>
    </message>
    <message>
        <source>The companions may then say something when you have been quiet that long (at most 4 times an hour, never while you type or speak).</source>
        <translation>その時間あなたが黙っていると、仲間が話しかけることがあります（1時間に4回まで。入力中や話している間はしません）。</translation>
    </message>
    <message>
        <source>Speak first when they notice you (with “Let them notice you” on in the camera switch&apos;s menu)</source>
        <translation>気づいたときに話しかける（カメラのスイッチのメニューで「見守ってもらう」がオンのとき）</translation>
    </message>
    <message>
        <source>Spoken by {voice}.</source>
        <translation>{voice} が話しました。</translation>
    </message>
</context>
<context>
    <name>settings_bridge</name>
    <message>
        <source>Web pages allowed</source>
        <translation>許可するウェブページ</translation>
    </message>
    <message>
        <source>One per line, e.g. http://localhost:5173 (:* for any port). Pages from elsewhere cannot connect; programs that are not web pages are not concerned.</source>
        <translation>1 行に 1 つ（例: http://localhost:5173、:* はすべてのポート）。ほかのページは接続できません。ウェブページでないプログラムには関係しません。</translation>
    </message>
</context>
<context>
    <name>settings_privacy</name>
    <message>
        <source>Privacy</source>
        <translation>プライバシー</translation>
    </message>
    <message>
        <source>Companions and people outside this window (on the network or through the bridge) are asked before they use your camera, your voice, your files, your past conversations or tools from elsewhere. What you answered with Always or Never is listed here: forget an answer to be asked again.</source>
        <translation>このウィンドウの外のコンパニオンや人（ネットワーク上やブリッジ経由）がカメラ、声、ファイル、過去の会話、外部のツールを使う前には、あなたに確認します。「常に許可」や「許可しない」と答えたものはここに並びます。答えを取り消すと、次回また確認します。</translation>
    </message>
    <message>
        <source>Remembered answers</source>
        <translation>記憶している答え</translation>
    </message>
    <message>
        <source>Nothing remembered yet.</source>
        <translation>まだ何も記憶していません。</translation>
    </message>
    <message>
        <source>Who</source>
        <translation>だれ</translation>
    </message>
    <message>
        <source>What</source>
        <translation>なに</translation>
    </message>
    <message>
        <source>Answer</source>
        <translation>答え</translation>
    </message>
    <message>
        <source>When</source>
        <translation>いつ</translation>
    </message>
    <message>
        <source>Allowed</source>
        <translation>許可</translation>
    </message>
    <message>
        <source>Refused</source>
        <translation>拒否</translation>
    </message>
    <message>
        <source>Forget</source>
        <translation>取り消す</translation>
    </message>
    <message>
        <source>Ask again next time (applies when you save)</source>
        <translation>次回また確認します（保存すると反映されます）</translation>
    </message>
</context>
<context>
    <name>settings_voice_input</name>
    <message>
        <source>Words the recogniser is not sure of always wait in the box for Enter.</source>
        <translation>認識に自信がない言葉は、いつもメッセージ欄で Enter を待ちます。</translation>
    </message>
    <message>
        <source>Keep the microphone on at the next start if it was on when I quit (otherwise it starts off)</source>
        <translation>終了時にマイクがオンなら、次の起動時もオンにする（オフなら起動時はいつもオフ）</translation>
    </message>
    <message>
        <source>Voice input</source>
        <translation>音声入力</translation>
    </message>
    <message>
        <source>Microphone</source>
        <translation>マイク</translation>
    </message>
    <message>
        <source>The system&apos;s default microphone</source>
        <translation>システムの既定のマイク</translation>
    </message>
    <message>
        <source>file:/path/to/speech.wav stands in for a microphone.</source>
        <translation>file:/path/to/speech.wav をマイクの代わりにできます。</translation>
    </message>
    <message>
        <source>Test the microphone</source>
        <translation>マイクをテスト</translation>
    </message>
    <message>
        <source>Say something…</source>
        <translation>何か話してください…</translation>
    </message>
    <message>
        <source>Heard you (loudest {level} dB).</source>
        <translation>聞こえました（最大 {level} dB）。</translation>
    </message>
    <message>
        <source>Almost nothing heard (loudest {level} dB): is the microphone muted, or too far?</source>
        <translation>ほとんど聞こえません（最大 {level} dB）。マイクがミュートか、遠すぎませんか？</translation>
    </message>
    <message>
        <source>Could not listen: {reason}</source>
        <translation>聞き取れませんでした：{reason}</translation>
    </message>
    <message>
        <source>How to talk</source>
        <translation>話し方</translation>
    </message>
    <message>
        <source>Hands-free: just speak</source>
        <translation>ハンズフリー：そのまま話す</translation>
    </message>
    <message>
        <source>Push-to-talk: hold the key or the button</source>
        <translation>プッシュトゥトーク：キーかボタンを押している間だけ</translation>
    </message>
    <message>
        <source>Push-to-talk key</source>
        <translation>プッシュトゥトークのキー</translation>
    </message>
    <message>
        <source>Silence that ends what you say</source>
        <translation>話し終わりとみなす無音の長さ</translation>
    </message>
    <message>
        <source>Longer if you pause to think; shorter for quicker answers.</source>
        <translation>考えながら間をあけるなら長めに、早く返事がほしいなら短めに。</translation>
    </message>
    <message>
        <source>Sensitivity</source>
        <translation>感度</translation>
    </message>
    <message>
        <source>Left: only clear, loud speech. Right: the faintest voice (also more noise).</source>
        <translation>左：はっきりした大きな声だけ。右：かすかな声も（雑音も拾いやすくなります）。</translation>
    </message>
    <message>
        <source>Recognition</source>
        <translation>音声認識</translation>
    </message>
    <message>
        <source>Built in: English, offline, no download</source>
        <translation>内蔵：英語、オフライン、ダウンロード不要</translation>
    </message>
    <message>
        <source>Whisper tiny: Japanese and English ({size} MB download)</source>
        <translation>Whisper tiny：日本語と英語（{size} MB のダウンロード）</translation>
    </message>
    <message>
        <source>Whisper base: hears Japanese or English ({size} MB download)</source>
        <translation>Whisper base：日本語か英語かを聞き分けます（{size} MB のダウンロード）</translation>
    </message>
    <message>
        <source>Whisper small: Japanese or English, fewer mistakes, needs a fast computer ({size} MB download)</source>
        <translation>Whisper small：日本語か英語か、間違いがより少なく、速いコンピューター向け（{size} MB のダウンロード）</translation>
    </message>
    <message>
        <source>Whisper base: Japanese and English, better ({size} MB download)</source>
        <translation>Whisper base：日本語と英語、より正確（{size} MB のダウンロード）</translation>
    </message>
    <message>
        <source>Downloaded and checked.</source>
        <translation>ダウンロードして確認済みです。</translation>
    </message>
    <message>
        <source>Not downloaded yet ({size} MB).</source>
        <translation>まだダウンロードしていません（{size} MB）。</translation>
    </message>
    <message>
        <source>Nothing to download.</source>
        <translation>ダウンロードは不要です。</translation>
    </message>
    <message>
        <source>Download…</source>
        <translation>ダウンロード…</translation>
    </message>
    <message>
        <source>Cancel download</source>
        <translation>ダウンロードを中止</translation>
    </message>
    <message>
        <source>Downloading: {done} of {total} MB</source>
        <translation>ダウンロード中：{total} MB 中 {done} MB</translation>
    </message>
    <message>
        <source>Not downloaded: {reason}</source>
        <translation>ダウンロードできませんでした：{reason}</translation>
    </message>
    <message>
        <source>Download cancelled: it continues where it stopped next time.</source>
        <translation>ダウンロードを取り消しました。次回は止まったところから続きます。</translation>
    </message>
    <message>
        <source>Download a speech model?</source>
        <translation>音声認識モデルをダウンロードしますか？</translation>
    </message>
    <message>
        <source>{file} ({size} MB) will be downloaded from huggingface.co ({repo}, MIT) and kept in {folder}. Its checksum is checked before it is used; recognition then runs on this computer, offline.</source>
        <translation>{file}（{size} MB）を huggingface.co（{repo}、MIT）からダウンロードし、{folder} に保存します。使う前にチェックサムを確認します。認識はこのコンピューター上でオフラインで行われます。</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>ダウンロード</translation>
    </message>
    <message>
        <source>Not now</source>
        <translation>今はしない</translation>
    </message>
    <message>
        <source>Language you speak</source>
        <translation>話す言語</translation>
    </message>
    <message>
        <source>Detect (Whisper only)</source>
        <translation>自動判定（Whisper のみ）</translation>
    </message>
    <message>
        <source>Japanese</source>
        <translation>日本語</translation>
    </message>
    <message>
        <source>English</source>
        <translation>英語</translation>
    </message>
    <message>
        <source>Send what I said as soon as I stop (otherwise it waits in the message box)</source>
        <translation>話し終えたらすぐ送る（オフならメッセージ欄で編集してから送れます）</translation>
    </message>
    <message>
        <source>Their voice in the microphone</source>
        <translation>マイクに入るコンパニオンの声</translation>
    </message>
    <message>
        <source>Tell it apart: I can cut them off by speaking</source>
        <translation>聞き分ける：話しかけてさえぎれる</translation>
    </message>
    <message>
        <source>Ignore the microphone while they speak</source>
        <translation>コンパニオンが話している間はマイクを無視する</translation>
    </message>
    <message>
        <source>Loud speakers next to the microphone? A headset works best.</source>
        <translation>マイクのそばに大きな音のスピーカー？ヘッドセットが一番です。</translation>
    </message>
</context>
<context>
    <name>speech_notice</name>
    <message>
        <source>Speech is off</source>
        <translation>音声はオフです</translation>
    </message>
    <message>
        <source>The companions&apos; lines are shown but not spoken: {reason}</source>
        <translation>コンパニオンの発言は表示されますが、読み上げられません: {reason}</translation>
    </message>
</context>
<context>
    <name>talk_button</name>
    <message>
        <source>Hold to talk (or hold {shortcut}): the companions stop and listen, and what you say is sent when you let go.</source>
        <translation>押している間話せます（{shortcut} でも）。コンパニオンは話すのをやめて聞き、離すと話した言葉が送られます。</translation>
    </message>
    <message>
        <source>Turn the microphone on in the status bar to talk.</source>
        <translation>話すには、ステータスバーでマイクをオンにしてください。</translation>
    </message>
    <message>
        <source>Hold to talk</source>
        <translation>押して話す</translation>
    </message>
</context>
<context>
    <name>tool_uses</name>
    <message>
        <source>Tools used</source>
        <translation>使ったツール</translation>
    </message>
    <message>
        <source>No tool used yet.</source>
        <translation>まだツールは使われていません。</translation>
    </message>
    <message>
        <source>built-in</source>
        <translation>組み込み</translation>
    </message>
    <message>
        <source>MCP server {name}</source>
        <translation>MCP サーバー {name}</translation>
    </message>
    <message>
        <source>plugin {name}</source>
        <translation>プラグイン {name}</translation>
    </message>
    <message>
        <source>{who} · {tool} ({origin}) → {result}</source>
        <translation>{who} · {tool}（{origin}）→ {result}</translation>
    </message>
    <message>
        <source>{who} · {tool} ({origin}) failed: {result}</source>
        <translation>{who} · {tool}（{origin}）失敗: {result}</translation>
    </message>
    <message>
        <source>{who} · {tool} ({origin}) was not run: {result}</source>
        <translation>{who} · {tool}（{origin}）は実行されませんでした: {result}</translation>
    </message>
    <message>
        <source>⚠ {text}</source>
        <translation>⚠ {text}</translation>
    </message>
    <message>
        <source>the camera</source>
        <translation>カメラ</translation>
    </message>
    <message>
        <source>search</source>
        <translation>検索</translation>
    </message>
</context>
<context>
    <name>turns</name>
    <message>
        <source>Companions</source>
        <translation>コンパニオン</translation>
    </message>
    <message>
        <source>listening</source>
        <translation>聞いています</translation>
    </message>
    <message>
        <source>thinking…</source>
        <translation>考え中…</translation>
    </message>
    <message>
        <source>speaking</source>
        <translation>話しています</translation>
    </message>
    <message>
        <source>muted</source>
        <translation>ミュート中</translation>
    </message>
    <message>
        <source>not here</source>
        <translation>不在</translation>
    </message>
    <message>
        <source>Mute</source>
        <translation>ミュート</translation>
    </message>
    <message>
        <source>Unmute</source>
        <translation>ミュート解除</translation>
    </message>
    <message>
        <source>Speak next</source>
        <translation>次に話す</translation>
    </message>
    <message>
        <source>Leave the conversation</source>
        <translation>会話から外れる</translation>
    </message>
    <message>
        <source>waving</source>
        <translation>手を振っています</translation>
    </message>
    <message>
        <source>nodding</source>
        <translation>うなずいています</translation>
    </message>
    <message>
        <source>shaking the head</source>
        <translation>首を振っています</translation>
    </message>
    <message>
        <source>bowing</source>
        <translation>おじぎしています</translation>
    </message>
    <message>
        <source>jumping</source>
        <translation>跳びはねています</translation>
    </message>
    <message>
        <source>thinking it over</source>
        <translation>考え込んでいます</translation>
    </message>
    <message>
        <source>Join the conversation</source>
        <translation>会話に戻る</translation>
    </message>
    <message>
        <source>Mute the chosen companion: it neither votes nor speaks until unmuted</source>
        <translation>選んだコンパニオンをミュートします（解除するまで投票も発言もしません）</translation>
    </message>
    <message>
        <source>The chosen companion takes the next turn (a finished conversation resumes)</source>
        <translation>選んだコンパニオンが次のターンで話します（終わった会話も再開します）</translation>
    </message>
    <message>
        <source>Turn-taking</source>
        <translation>発言の順番</translation>
    </message>
    <message>
        <source>you</source>
        <translation>あなた</translation>
    </message>
    <message>
        <source>No conversation yet: write to the companions.</source>
        <translation>まだ会話はありません。話しかけてみましょう。</translation>
    </message>
    <message>
        <source>Conversation running</source>
        <translation>会話中</translation>
    </message>
    <message>
        <source>Conversation ended</source>
        <translation>会話は終わりました</translation>
    </message>
    <message>
        <source>Turn {n} · after {who} · {phase}</source>
        <translation>ターン {n} · {who} の発言のあと · {phase}</translation>
    </message>
    <message>
        <source>No turn yet</source>
        <translation>まだターンはありません</translation>
    </message>
    <message>
        <source>voting</source>
        <translation>投票中</translation>
    </message>
    <message>
        <source>composing</source>
        <translation>発言を考え中</translation>
    </message>
    <message>
        <source>done</source>
        <translation>完了</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>取り消し</translation>
    </message>
    <message>
        <source>last turn</source>
        <translation>最後のターン</translation>
    </message>
    <message>
        <source>Companion</source>
        <translation>コンパニオン</translation>
    </message>
    <message>
        <source>Vote</source>
        <translation>投票</translation>
    </message>
    <message>
        <source>Named</source>
        <translation>指名</translation>
    </message>
    <message>
        <source>Closing</source>
        <translation>締め</translation>
    </message>
    <message>
        <source>voting…</source>
        <translation>投票中…</translation>
    </message>
    <message>
        <source>stopped before voting</source>
        <translation>投票の前に止まりました</translation>
    </message>
    <message>
        <source>speak</source>
        <translation>話したい</translation>
    </message>
    <message>
        <source>listen</source>
        <translation>聞く</translation>
    </message>
    <message>
        <source>no vote: listens</source>
        <translation>投票なし（聞く扱い）</translation>
    </message>
    <message>
        <source>unreadable vote: listens</source>
        <translation>読めない投票（聞く扱い）</translation>
    </message>
    <message>
        <source>not asked</source>
        <translation>対象外</translation>
    </message>
    <message>
        <source>✓ named</source>
        <translation>✓ 指名</translation>
    </message>
    <message>
        <source>waiting to speak</source>
        <translation>話す順番待ち</translation>
    </message>
    <message numerus="yes">
        <source>This conversation has %n messages: write to continue it.</source>
        <translation>
            <numerusform>この会話には %n 件のメッセージがあります。話しかけると続きます。</numerusform>
        </translation>
    </message>
    <message>
        <source>going on</source>
        <translation>継続</translation>
    </message>
    <message>
        <source>winding down</source>
        <translation>終わりの気配</translation>
    </message>
    <message>
        <source>wrapping up</source>
        <translation>まとめ</translation>
    </message>
    <message>
        <source>goodbye</source>
        <translation>お別れ</translation>
    </message>
    <message>
        <source>Closing:</source>
        <translation>締め:</translation>
    </message>
    <message>
        <source>Speaker: {who}</source>
        <translation>話し手: {who}</translation>
    </message>
    <message>
        <source>Nobody takes the floor</source>
        <translation>話し手はいません</translation>
    </message>
    <message>
        <source>Speaker: not chosen yet</source>
        <translation>話し手: まだ決まっていません</translation>
    </message>
    <message>
        <source>Speaking now: {who}</source>
        <translation>発話中: {who}</translation>
    </message>
    <message>
        <source>Nobody is speaking</source>
        <translation>誰も話していません</translation>
    </message>
    <message>
        <source>Next: {who} (asked by you)</source>
        <translation>次: {who}（あなたの指定）</translation>
    </message>
    <message>
        <source>{who} was asked to speak next</source>
        <translation>{who} が次に話すよう指定されました</translation>
    </message>
    <message>
        <source>{who} was named</source>
        <translation>{who} が名指しされました</translation>
    </message>
    <message>
        <source>{who} wants to speak most (importance {importance})</source>
        <translation>{who} が一番話したがっています（重要度 {importance}）</translation>
    </message>
    <message>
        <source>{who} speaks: the most eager one just spoke</source>
        <translation>直前に話した人を避けて {who} が話します</translation>
    </message>
    <message>
        <source>{who} answers first (the model server takes one request at a time: the others vote on the next line)</source>
        <translation>{who} が最初に答えます（モデルサーバーは一度に1件ずつなので、ほかの人は次の発言で投票します）</translation>
    </message>
    <message>
        <source>{who} spoke first, chosen on another machine</source>
        <translation>{who} が別のマシンで選ばれ、先に話しました</translation>
    </message>
    <message>
        <source>{who} answers you (nobody asked for the floor)</source>
        <translation>{who} があなたに答えます（発言を求めた人はいませんでした）</translation>
    </message>
    <message>
        <source>nobody wants to speak</source>
        <translation>誰も話したがっていません</translation>
    </message>
    <message>
        <source>{named} was named but could not answer, so {who} answers</source>
        <translation>{named} が名指しされましたが答えられなかったので、{who} が答えます</translation>
    </message>
    <message>
        <source>{passed} could not answer, so {who} answers</source>
        <translation>{passed} が答えられなかったので、{who} が答えます</translation>
    </message>
    <message>
        <source>no vote within {n} s</source>
        <translation>{n} 秒以内に投票がありませんでした</translation>
    </message>
    <message>
        <source>not needed: {who} took the turn</source>
        <translation>不要: {who} が発言しました</translation>
    </message>
    <message>
        <source>not needed: the turn was decided</source>
        <translation>不要: 話し手はもう決まりました</translation>
    </message>
    <message>
        <source>the vote was called off</source>
        <translation>投票は取りやめになりました</translation>
    </message>
    <message>
        <source>the answer was not a vote</source>
        <translation>返事が投票の形になっていませんでした</translation>
    </message>
    <message>
        <source>Ended: {reason}</source>
        <translation>終了: {reason}</translation>
    </message>
    <message>
        <source>no vote came from the language model</source>
        <translation>言語モデルから投票が届きませんでした</translation>
    </message>
    <message>
        <source>{who} said goodbye</source>
        <translation>{who} が会話を締めくくりました</translation>
    </message>
    <message>
        <source>nobody wanted to speak</source>
        <translation>話したい人がいませんでした</translation>
    </message>
    <message numerus="yes">
        <source>the limit of %n turns was reached</source>
        <translation>
            <numerusform>ターンの上限（%n）に達しました</numerusform>
        </translation>
    </message>
    <message>
        <source>stopped by you</source>
        <translation>あなたが止めました</translation>
    </message>
    <message>
        <source>you cut in; the companions are waiting for you</source>
        <translation>あなたが割り込みました。コンパニオンはあなたの発言を待っています</translation>
    </message>
    <message>
        <source>the message was addressed to no companion</source>
        <translation>宛先のコンパニオンがいませんでした</translation>
    </message>
    <message>
        <source>something went wrong ({detail})</source>
        <translation>問題が起きました（{detail}）</translation>
    </message>
    <message>
        <source>those who wanted to speak could not say anything (the language model gave no answer)</source>
        <translation>話したい人がいましたが、誰も話せませんでした（言語モデルから答えがありません）</translation>
    </message>
    <message>
        <source>something went wrong inside Madoi (the log file says what)</source>
        <translation>円居の中で問題が起きました（詳しくはログファイルに）</translation>
    </message>
    <message>
        <source>Earlier turns</source>
        <translation>これまでのターン</translation>
    </message>
    <message>
        <source>{n}. {who} — {why}</source>
        <translation>{n}. {who} — {why}</translation>
    </message>
    <message>
        <source>{n}. nobody spoke — {why}</source>
        <translation>{n}. 発言なし — {why}</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>止める</translation>
    </message>
    <message>
        <source>End the conversation now</source>
        <translation>会話を今すぐ終わらせます</translation>
    </message>
    <message>
        <source>Interrupt</source>
        <translation>割り込む</translation>
    </message>
    <message>
        <source>Cut in: the speech and the thinking in progress stop, and the companions wait for you</source>
        <translation>割り込み: 今の発話と考え中の発言を止め、コンパニオンはあなたの発言を待ちます</translation>
    </message>
    <message>
        <source>the language model did not answer (the chat says why)</source>
        <translation>言語モデルが応答しませんでした（理由はチャットに表示されています）</translation>
    </message>
    <message>
        <source>Turn {n} · may speak first: {why} · {phase}</source>
        <translation>ターン {n} · 先に話しかけてよい：{why} · {phase}</translation>
    </message>
    <message>
        <source>you sat down at the desk</source>
        <translation>あなたが机の前に来た</translation>
    </message>
    <message numerus="yes">
        <source>you came back after %n minutes</source>
        <translation>
            <numerusform>あなたが%n分ぶりに戻ってきた</numerusform>
        </translation>
    </message>
    <message>
        <source>someone joined you</source>
        <translation>あなたのそばにもう一人来た</translation>
    </message>
    <message>
        <source>you held something up to the camera</source>
        <translation>あなたがカメラに何かを見せた</translation>
    </message>
    <message>
        <source>the light went out</source>
        <translation>明かりが消えた</translation>
    </message>
    <message numerus="yes">
        <source>you were quiet for %n minutes</source>
        <translation>
            <numerusform>あなたが%n分間なにも言わなかった</numerusform>
        </translation>
    </message>
    <message>
        <source>{who} spoke first ({why}); the companions are waiting for you</source>
        <translation>{who}が先に話しかけました（{why}）。みんなあなたの返事を待っています</translation>
    </message>
    <message>
        <source>{occasion}: {why}</source>
        <translation>{occasion}：{why}</translation>
    </message>
</context>
<context>
    <name>turns.phase</name>
    <message>
        <source>speaking</source>
        <translation>発話中</translation>
    </message>
</context>
<context>
    <name>voice_engines</name>
    <message>
        <source>Voice engines (VOICEVOX, AivisSpeech)</source>
        <translation>音声エンジン（VOICEVOX、AivisSpeech）</translation>
    </message>
    <message>
        <source>Look for VOICEVOX and AivisSpeech on this computer</source>
        <translation>このコンピューターの VOICEVOX と AivisSpeech を探す</translation>
    </message>
    <message>
        <source>Other engines&apos; addresses</source>
        <translation>ほかのエンジンのアドレス</translation>
    </message>
    <message>
        <source>e.g. http://192.168.1.20:50021, separated by commas. An engine on another computer is used only when its address is given here.</source>
        <translation>例: http://192.168.1.20:50021（複数はカンマで区切る）。ほかのコンピューターのエンジンは、ここにアドレスを書いたときだけ使います。</translation>
    </message>
    <message>
        <source>Look again</source>
        <translation>もう一度探す</translation>
    </message>
    <message>
        <source>Looking for voice engines…</source>
        <translation>音声エンジンを探しています…</translation>
    </message>
    <message numerus="yes">
        <source>%n engines found</source>
        <translation>
            <numerusform>%n 個のエンジンが見つかりました</numerusform>
        </translation>
    </message>
    <message>
        <source>No engine found. Start VOICEVOX or AivisSpeech, then look again; meanwhile Japanese lines are said by Open JTalk.</source>
        <translation>エンジンが見つかりません。VOICEVOX か AivisSpeech を起動してから、もう一度探してください。それまで日本語のせりふは Open JTalk が話します。</translation>
    </message>
    <message>
        <source>Engine and voices</source>
        <translation>エンジンと声</translation>
    </message>
    <message>
        <source>Style id</source>
        <translation>スタイル ID</translation>
    </message>
    <message>
        <source>{engine} at {url}</source>
        <translation>{engine}（{url}）</translation>
    </message>
    <message numerus="yes">
        <source>%n voices</source>
        <translation>
            <numerusform>%n 個の声</numerusform>
        </translation>
    </message>
    <message>
        <source>does not answer: {problem}</source>
        <translation>応答しません: {problem}</translation>
    </message>
    <message>
        <source>Test</source>
        <translation>試す</translation>
    </message>
    <message>
        <source>Each companion&apos;s voice is chosen in the Companions tab, among these voices too.</source>
        <translation>各コンパニオンの声は「コンパニオン」タブで選べます（ここにある声も選べます）。</translation>
    </message>
</context>
<context>
    <name>window_menu</name>
    <message>
        <source>&amp;Conversation</source>
        <translation>会話(&amp;C)</translation>
    </message>
    <message>
        <source>&amp;New conversation</source>
        <translation>新しい会話(&amp;N)</translation>
    </message>
    <message>
        <source>&amp;Interrupt (they stop and listen)</source>
        <translation>割り込む(&amp;I)（話すのをやめて聞く）</translation>
    </message>
    <message>
        <source>&amp;Stop the conversation</source>
        <translation>会話を止める(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Quit Madoi</source>
        <translation>円居を終了(&amp;Q)</translation>
    </message>
</context>
</TS>

// SPDX-License-Identifier: GPL-2.0-or-later
#include "app/recorddialog.h"

#include <unistd.h>
#include <utility>

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QVBoxLayout>

namespace lockscope::gui {

namespace {

QLatin1String latin1(std::string_view s)
{
    return QLatin1String(s.data(), qsizetype(s.size()));
}

} // namespace

QStringList recordCommand(const RecordRequest& r)
{
    QStringList argv;
    if (!r.elevate.isEmpty())
        argv << r.elevate;
    if (QFileInfo(r.elevate).fileName() == QLatin1String("sudo"))
        argv << QStringLiteral("-n"); // never prompt on a terminal nobody sees
    argv << r.lockscope << QStringLiteral("record") << QStringLiteral("--stop-on-stdin-close") << QStringLiteral("-o")
         << r.output;
    if (!r.label.isEmpty())
        argv << QStringLiteral("--label") << r.label;
    if (r.duration_s > 0)
        argv << QStringLiteral("-d") << QString::number(r.duration_s);
    if (r.all)
        argv << QStringLiteral("-a");
    for (std::size_t i = 0; i < kOptInProbes.size(); ++i)
        if (r.also_time[i])
            argv << QStringLiteral("--") + latin1(kOptInProbes[i].flag);
    if (!r.workload.isEmpty())
        argv << QStringLiteral("--") << r.workload;
    return argv;
}

namespace {

QString absoluteProgram(const QString& program)
{
    if (program.isEmpty())
        return program;
    if (program.contains(QLatin1Char('/')))
        return QFileInfo(program).absoluteFilePath();
    const QString found = QStandardPaths::findExecutable(program);
    return found.isEmpty() ? program : found;
}

} // namespace

RecordRequest withAbsolutePaths(RecordRequest r)
{
    r.lockscope = absoluteProgram(r.lockscope);
    r.elevate = absoluteProgram(r.elevate);
    if (!r.output.isEmpty())
        r.output = QFileInfo(r.output).absoluteFilePath();
    if (!r.workload.isEmpty())
        r.workload.front() = absoluteProgram(r.workload.front());
    return r;
}

QString findLockscopeBinary()
{
    QString env = qEnvironmentVariable("LOCKSCOPE_BIN");
    if (!env.isEmpty() && QFileInfo(env).isExecutable())
        return env;
    const QDir here(QCoreApplication::applicationDirPath());
    for (const QString& rel : {QStringLiteral("lockscope"), QStringLiteral("../cli/lockscope"),
                               QStringLiteral("../../cli/lockscope")}) {
        const QFileInfo fi(here.filePath(rel));
        if (fi.isFile() && fi.isExecutable())
            return fi.canonicalFilePath();
    }
    return QStandardPaths::findExecutable(QStringLiteral("lockscope"));
}

QString defaultElevation()
{
    if (geteuid() == 0)
        return {};
    if (!QStandardPaths::findExecutable(QStringLiteral("pkexec")).isEmpty())
        return QStringLiteral("pkexec");
    if (!QStandardPaths::findExecutable(QStringLiteral("sudo")).isEmpty())
        return QStringLiteral("sudo");
    return {};
}

RecordDialog::RecordDialog(QWidget* parent) : QDialog(parent)
{
    setWindowTitle(tr("Record a capture"));
    auto* layout = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    workload_ = new QLineEdit;
    workload_->setPlaceholderText(tr("workload command, e.g. semop-bench --threads 8"));
    all_ = new QCheckBox(tr("Record every process instead (-a; needs a duration)"));
    duration_ = new QDoubleSpinBox;
    duration_->setRange(0, 86400);
    duration_->setSuffix(tr(" s"));
    duration_->setSpecialValueText(tr("until the workload exits"));
    label_ = new QLineEdit(QStringLiteral("baseline"));
    output_ = new QLineEdit(QDir::current().filePath(QStringLiteral("capture.lockscope.json")));
    auto* browse = new QPushButton(tr("Browse…"));
    auto* outRow = new QHBoxLayout;
    outRow->addWidget(output_, 1);
    outRow->addWidget(browse);
    elevate_ = new QComboBox;
    elevate_->addItem(tr("pkexec (graphical password prompt)"), QStringLiteral("pkexec"));
    elevate_->addItem(tr("sudo -n (passwordless sudo)"), QStringLiteral("sudo"));
    elevate_->addItem(tr("none (already root or has CAP_BPF)"), QString());
    elevate_->setCurrentIndex(std::max(0, elevate_->findData(defaultElevation())));
    form->addRow(tr("Workload:"), workload_);
    form->addRow(QString(), all_);
    form->addRow(tr("Duration:"), duration_);
    form->addRow(tr("Label:"), label_);
    form->addRow(tr("Output:"), outRow);
    form->addRow(tr("Privileges:"), elevate_);
    auto* extra = new QVBoxLayout;
    for (std::size_t i = 0; i < kOptInProbes.size(); ++i) {
        const OptInProbe& p = kOptInProbes[i];
        alsoTime_[i] = new QCheckBox(latin1(p.measures) + QStringLiteral(" (--") + latin1(p.flag) + QLatin1Char(')'));
        alsoTime_[i]->setToolTip(tr("A hook on every call: can slow a syscall-bound workload by tens of percent"));
        extra->addWidget(alsoTime_[i]);
    }
    form->addRow(tr("Also time:"), extra);
    layout->addLayout(form);
    status_ = new QLabel(tr("Ready."));
    status_->setTextFormat(Qt::PlainText); // the recorder's own lines
    status_->setWordWrap(true);
    log_ = new QPlainTextEdit;
    log_->setReadOnly(true);
    log_->setMaximumBlockCount(2000);
    layout->addWidget(status_);
    layout->addWidget(log_, 1);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    startButton_ = buttons->addButton(tr("Start"), QDialogButtonBox::ActionRole);
    stopButton_ = buttons->addButton(tr("Stop"), QDialogButtonBox::ActionRole);
    stopButton_->setEnabled(false);
    layout->addWidget(buttons);
    resize(640, 480);

    connect(browse, &QPushButton::clicked, this, [this] {
        const QString p = QFileDialog::getSaveFileName(this, tr("Capture file"), output_->text(),
                                                       tr("lockscope captures (*.json)"));
        if (!p.isEmpty())
            output_->setText(p);
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(startButton_, &QPushButton::clicked, this, &RecordDialog::start);
    connect(stopButton_, &QPushButton::clicked, this, [this] {
        if (process_) {
            // The recorder may be root (pkexec/sudo): no signal from us reaches
            // it, but end of file on its stdin stops it like SIGTERM would.
            process_->closeWriteChannel();
            status_->setText(tr("Stopping: the workload gets SIGTERM, the capture is written…"));
        }
    });
}

void RecordDialog::start()
{
    RecordRequest r;
    r.lockscope = findLockscopeBinary();
    if (r.lockscope.isEmpty()) {
        status_->setText(tr("Cannot find the lockscope binary: build the cli target, put it on PATH, "
                            "or set LOCKSCOPE_BIN."));
        return;
    }
    r.output = output_->text().trimmed();
    r.label = label_->text().trimmed();
    r.duration_s = duration_->value();
    r.all = all_->isChecked();
    r.workload = QProcess::splitCommand(workload_->text());
    r.elevate = elevate_->currentData().toString();
    for (std::size_t i = 0; i < alsoTime_.size(); ++i)
        r.also_time[i] = alsoTime_[i]->isChecked();
    if (r.output.isEmpty() || (!r.all && r.workload.isEmpty()) || (r.all && r.duration_s <= 0)) {
        status_->setText(tr("Give an output file and either a workload or “every process” with a duration."));
        return;
    }
    r = withAbsolutePaths(r);
    const QStringList argv = recordCommand(r);
    pendingOutput_ = r.output;
    log_->appendPlainText(QStringLiteral("$ ") + argv.join(QLatin1Char(' ')));
    process_ = new QProcess(this);
    process_->setProcessChannelMode(QProcess::MergedChannels);
    connect(process_, &QProcess::readyRead, this, &RecordDialog::readOutput);
    connect(process_, &QProcess::finished, this, &RecordDialog::finished);
    connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart)
            status_->setText(tr("Could not start %1: %2").arg(process_->program(), process_->errorString()));
    });
    startButton_->setEnabled(false);
    stopButton_->setEnabled(true);
    status_->setText(tr("Recording…"));
    process_->start(argv.front(), argv.mid(1));
}

void RecordDialog::readOutput()
{
    const QString text = QString::fromLocal8Bit(process_->readAll());
    // The recorder redraws its status line with '\r'; keep the latest piece.
    const QStringList lines = text.split(QRegularExpression(QStringLiteral("[\r\n]")), Qt::SkipEmptyParts);
    for (const QString& l : lines)
        log_->appendPlainText(l);
    if (!lines.isEmpty())
        status_->setText(lines.back());
}

void RecordDialog::finished(int exitCode, QProcess::ExitStatus status)
{
    readOutput();
    startButton_->setEnabled(true);
    stopButton_->setEnabled(false);
    process_->deleteLater();
    process_ = nullptr;
    if (status == QProcess::NormalExit && exitCode == 0 && QFileInfo(pendingOutput_).isReadable()) {
        status_->setText(tr("Recorded %1").arg(pendingOutput_));
        emit recorded(pendingOutput_);
        accept();
        return;
    }
    status_->setText(tr("lockscope record failed (exit %1); see the log above.").arg(exitCode));
}

} // namespace lockscope::gui
